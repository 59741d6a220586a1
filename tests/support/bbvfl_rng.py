"""The project's seeded generator (client/dp/rng.h) in plain Python, for the tests that play an
attacker holding a session file: ChaCha20 (RFC 8439 block function, 96-bit nonce zero, 32-bit
counter from 0) keyed by LE64(seed) || LE64(stream) || "bbvfl-rng-v1" || 4 zero bytes, read as
little-endian 32-bit words, u64 = lo | hi << 32; uniform = (u64 >> 11) * 2^-53; below(n) by
rejection; the train/test split (ml/data.c bbvfl_split) and the randomized response of
dp/labeldp.c as they are drawn from it. Only what the tests need; slow but small inputs."""
import math
import struct

M32 = 0xFFFFFFFF
STREAM_SPLIT, STREAM_LABELS = 1, 7


def _rotl(v, c):
    return ((v << c) & M32) | (v >> (32 - c))


def _qr(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & M32; s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & M32; s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & M32; s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & M32; s[b] = _rotl(s[b] ^ s[c], 7)


def chacha20_words(key_words, counter, nonce_words):
    init = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + list(key_words) + [counter & M32] + list(nonce_words)
    s = list(init)
    for _ in range(10):
        _qr(s, 0, 4, 8, 12); _qr(s, 1, 5, 9, 13); _qr(s, 2, 6, 10, 14); _qr(s, 3, 7, 11, 15)
        _qr(s, 0, 5, 10, 15); _qr(s, 1, 6, 11, 12); _qr(s, 2, 7, 8, 13); _qr(s, 3, 4, 9, 14)
    return [(x + y) & M32 for x, y in zip(s, init)]


class SeededRng:
    def __init__(self, seed, stream):
        key = struct.pack("<QQ", seed, stream) + b"bbvfl-rng-v1" + b"\0" * 4
        self.key = struct.unpack("<8I", key)
        self.counter = 0
        self.block = []

    def u32(self):
        if not self.block:
            self.block = chacha20_words(self.key, self.counter, (0, 0, 0))
            self.counter += 1
        return self.block.pop(0)

    def u64(self):
        lo = self.u32()
        return lo | self.u32() << 32

    def uniform(self):
        return (self.u64() >> 11) * 2.0 ** -53

    def below(self, n):
        lim = (2 ** 64 - 1) - (2 ** 64 - 1) % n
        while True:
            w = self.u64()
            if w < lim or lim == 0:
                return w % n


def stream(purpose, index=0):
    return purpose << 32 | index


def split(n, test_frac, seed):
    """bbvfl_split: (sorted training rows, sorted test rows)."""
    nt = int(math.floor(test_frac * n + 0.5))
    r = SeededRng(seed, stream(STREAM_SPLIT))
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = r.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return sorted(perm[nt:]), sorted(perm[:nt])


def rr_keep(eps, K):
    return 1.0 / (1.0 + (K - 1) * math.exp(-eps))


def rr_flips_seeded(seed, n_train, K, eps):
    """What the old seeded randomized response did to each training position (dp/labeldp.c with the
    stream (seed, LABELS, 0)): for K = 2 the draw does not depend on the label, so an attacker with
    the seed learns for every row whether it was flipped. Returns a list of booleans (flipped)."""
    r = SeededRng(seed, stream(STREAM_LABELS))
    keep = rr_keep(eps, K)
    out = []
    for _ in range(n_train):
        if r.uniform() < keep:
            out.append(False)
        else:
            r.below(K - 1)
            out.append(True)
    return out
