#!/usr/bin/env python3
"""Independent computation of the masked-mode test vector used by tests/unit/test_dp_masks.c.

Pure Python (no third-party modules): secp256k1 point arithmetic, Keccak-256 (original padding,
as Ethereum uses it) and the RFC 8439 ChaCha20 block function, written from the specifications,
not from the C code. Run `python3 tests/unit/masks_vector.py` and compare with the constants in
test_dp_masks.c (the derivations are in client/dp/masks.h and docs/MASKED.md).
"""

# ---------------------------------------------------------------- secp256k1
P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def ec_add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        lam = 3 * a[0] * a[0] * pow(2 * a[1], P - 2, P) % P
    else:
        lam = (b[1] - a[1]) * pow(b[0] - a[0], P - 2, P) % P
    x = (lam * lam - a[0] - b[0]) % P
    return (x, (lam * (a[0] - x) - a[1]) % P)


def ec_mul(k, pt):
    acc = None
    while k:
        if k & 1:
            acc = ec_add(acc, pt)
        pt = ec_add(pt, pt)
        k >>= 1
    return acc


def pub64(k):
    x, y = ec_mul(k, G)
    return x.to_bytes(32, "big") + y.to_bytes(32, "big")


def ecdh(k, peer64):
    pt = (int.from_bytes(peer64[:32], "big"), int.from_bytes(peer64[32:], "big"))
    assert (pt[1] * pt[1] - pt[0] ** 3 - 7) % P == 0
    x, y = ec_mul(k, pt)
    return bytes([2 | (y & 1)]) + x.to_bytes(32, "big")


# ---------------------------------------------------------------- Keccak-256
RC = [0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
      0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
      0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
      0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
      0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
      0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61], [28, 55, 25, 21, 56],
       [27, 20, 39, 8, 14]]  # ROT[x][y]
M64 = 2**64 - 1


def rol(v, n):
    return ((v << n) | (v >> (64 - n))) & M64 if n else v


def keccak_f(a):  # a[x][y]
    for rc in RC:
        c = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ rol(c[(x + 1) % 5], 1) for x in range(5)]
        a = [[a[x][y] ^ d[x] for y in range(5)] for x in range(5)]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = rol(a[x][y], ROT[x][y])
        a = [[b[x][y] ^ (~b[(x + 1) % 5][y] & b[(x + 2) % 5][y]) for y in range(5)] for x in range(5)]
        a[0][0] ^= rc
    return a


def keccak256(data):
    rate = 136
    msg = bytearray(data) + b"\x01"
    while len(msg) % rate:
        msg.append(0)
    msg[-1] |= 0x80
    a = [[0] * 5 for _ in range(5)]
    for off in range(0, len(msg), rate):
        for i in range(rate // 8):
            a[i % 5][i // 5] ^= int.from_bytes(msg[off + 8 * i: off + 8 * i + 8], "little")
        a = keccak_f(a)
    return b"".join(a[i % 5][i // 5].to_bytes(8, "little") for i in range(4))


# ---------------------------------------------------------------- ChaCha20 (RFC 8439)
M32 = 2**32 - 1


def qr(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & M32; s[d] ^= s[a]; s[d] = ((s[d] << 16) | (s[d] >> 16)) & M32
    s[c] = (s[c] + s[d]) & M32; s[b] ^= s[c]; s[b] = ((s[b] << 12) | (s[b] >> 20)) & M32
    s[a] = (s[a] + s[b]) & M32; s[d] ^= s[a]; s[d] = ((s[d] << 8) | (s[d] >> 24)) & M32
    s[c] = (s[c] + s[d]) & M32; s[b] ^= s[c]; s[b] = ((s[b] << 7) | (s[b] >> 25)) & M32


def chacha_block(key32, counter, nonce_words):
    st = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    st += [int.from_bytes(key32[4 * i: 4 * i + 4], "little") for i in range(8)]
    st += [counter] + list(nonce_words)
    w = st[:]
    for _ in range(10):
        qr(w, 0, 4, 8, 12); qr(w, 1, 5, 9, 13); qr(w, 2, 6, 10, 14); qr(w, 3, 7, 11, 15)
        qr(w, 0, 5, 10, 15); qr(w, 1, 6, 11, 12); qr(w, 2, 7, 8, 13); qr(w, 3, 4, 9, 14)
    return b"".join(((w[i] + st[i]) & M32).to_bytes(4, "little") for i in range(16))


# ---------------------------------------------------------------- masked mode
def session_id(chain_id, contract):
    return keccak256(b"bbvfl/mask/session/v1" + chain_id.to_bytes(8, "big") + contract)


def pair_key(priv, peer64, session):
    return keccak256(b"bbvfl/mask/pair/v1" + session + ecdh(priv, peer64))


def expand(pk, frm, to, rnd, pset, n):
    dk = keccak256(b"bbvfl/mask/dir/v1" + pk + bytes([frm, to]))
    nonce = (rnd & M32, pset & M32, pset >> 32)
    stream = b"".join(chacha_block(dk, c, nonce) for c in range((n + 31) // 32))
    return [int.from_bytes(stream[2 * j: 2 * j + 2], "little") for j in range(n)]


def main():
    privs = [int.from_bytes(bytes([i + 1]) * 32, "big") for i in range(3)]
    pubs = [pub64(k) for k in privs]
    contract = bytes.fromhex("5fbdb2315678afecb367f032d93f642f64180aa3")
    sess = session_id(31337, contract)
    n, rnd, pset, levels = 40, 7, 0b111, 16
    # self-checks of the primitives against published values
    assert keccak256(b"").hex().startswith("c5d2460186f7233c"), "Keccak-256 of the empty string"
    rfc = chacha_block(bytes(range(32)), 1, (0x09000000, 0x4A000000, 0))  # RFC 8439 2.3.2
    assert rfc[:8].hex() == "10f1e7e4d13b5915", "ChaCha20 block, RFC 8439 section 2.3.2"
    assert pub64(1)[:32] == G[0].to_bytes(32, "big"), "1 * G"
    print("session      =", sess.hex())
    print("shared01     =", ecdh(privs[0], pubs[1]).hex())
    pk01 = pair_key(privs[0], pubs[1], sess)
    print("pair01       =", pk01.hex())
    print("u(0->1)      =", ", ".join("0x%04x" % v for v in expand(pk01, 0, 1, rnd, pset, n)))
    q = [j % (levels + 1) for j in range(n)]
    y = q[:]
    for peer in (1, 2):
        pk = pair_key(privs[0], pubs[peer], sess)
        up, down = expand(pk, 0, peer, rnd, pset, n), expand(pk, peer, 0, rnd, pset, n)
        y = [(y[j] + up[j] - down[j]) % 65536 for j in range(n)]
    print("masked0      =", "".join("%04x" % v for v in y))


if __name__ == "__main__":
    main()
