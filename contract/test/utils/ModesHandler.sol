// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./Base.sol";
import {BbvflBase} from "../../src/BbvflBase.sol";
import {BbvflRewardToken} from "../../src/BbvflRewardToken.sol";

/// The mode-specific entry points, called through one interface on whichever contract is under
/// test (a mode that lacks one is never sent it: its selector is not targeted).
interface ISessionOps {
    function submit(uint64 round, bytes calldata q) external;
    function expireRound() external;
    function aggregate(uint64 round, bytes[] calldata payloads) external;
    function postSum(uint64 round, bytes32 sumHash) external;
    function dispute(uint64 round, address claimer, bytes32 sumHash, bytes[] calldata payloads) external;
}

/// @title Stateful fuzzing handler for every aggregation mode
/// @notice Forge calls this handler's actions in random order with random arguments; each action
/// makes one (or, for `step`, a few) calls to the session contract, right or wrong, from clients,
/// outsiders or anyone, and keeps ghost state: what the session should look like, computed from
/// the calls that succeeded, never read back from the contract's own bookkeeping (except the head
/// round, the active client and the views under test). The invariants (ModesInvariant.t.sol)
/// compare the contract with the ghost state and read the counters below, each of which must
/// stay 0.
///
/// Modes: Lane (BbvflAggregator, masked lanes: expireRound voids and re-opens a round), Hashed
/// (BbvflHashAggregator, plain values), Packed (BbvflPackedAggregator) and Optimistic
/// (BbvflOptimisticAggregator: postSum claims, right or wrong, and disputes by anyone).
/// The session shape assumed here (the test's config): every round carries the same number of
/// values (B = 1, K = 1, one eval row per eval round) and every epoch ends with an EVAL round.
contract ModesHandler is Base {
    enum Mode {
        Lane,
        Hashed,
        Packed,
        Optimistic
    }

    /// A postSum claim as the handler saw it accepted.
    struct Claim {
        address claimer;
        bytes32 sumHash;
        bool wrong; // sumHash is not the hash of the round's packed sum
        bool standing; // not disputed, not erased by a roll-back to this or an earlier round
        uint64 parts; // participants (bit = index) whose payload hashes the claim committed to
        uint256 at; // block of the claim, then of its dispute (bounds the epoch's window)
    }

    bytes4 internal constant PANIC = 0x4e487b71;
    bytes4 internal constant DISPUTE_WINDOW_OPEN = bytes4(keccak256("DisputeWindowOpen(uint256)"));
    bytes32 internal constant SALT = keccak256("bbvfl.modes.invariant");
    uint256 public constant ACTORS = 5; // the first M to register are the clients, the rest outsiders
    uint256 internal constant RING = 8; // hashed modes' ring of submission slots

    Mode public immutable mode;
    BbvflBase public immutable agg;
    ISessionOps internal immutable ops;
    BbvflRewardToken public immutable token;
    uint256 public immutable M;
    uint256 internal immutable N; // values per round
    uint256 internal immutable LEVELS;
    uint256 internal immutable T;
    uint256 internal immutable PER; // rounds per epoch (T + V)
    uint256 public immutable EPOCHS;
    uint256 internal immutable TOTAL;
    uint256 public immutable RATE;
    uint256 public immutable POOL;
    uint256 internal immutable ACTIVE_BLOCKS;
    uint256 internal immutable TIMEOUT;
    uint256 internal immutable COMMIT;
    uint256 internal immutable REVEAL;
    uint256 internal immutable STALENESS;
    uint256 internal immutable VB; // packed: bits per value
    uint256 internal immutable SB; // packed: bits per sum value

    // ------------------------------------------------------------ ghost state: election
    address[] public ghostClients; // registration order = client index
    mapping(address => uint256) public idx1; // client index + 1 (0: not registered)
    uint64 internal _committed; // bit = index
    uint64 internal _revealed;
    uint256 internal _closeBlock;
    bool public started;
    bool public ended;
    bool public endedUnstarted; // the election ran with no reveal

    // ------------------------------------------------------------ ghost state: rounds
    uint64 public parts; // participants, bit = index
    uint64 public head; // oldest round not done (totalRounds after the end)
    uint256 internal _headAt; // block head became head (its openedAt)
    uint256 internal _aggrAt; // block head became aggregatable (0: not yet)
    bool internal _headAgg; // hashed modes: head's sum exists (TRAIN head waiting for its gradient)
    // submission words as the hashed modes store them: (slot, index) => round + 1, block
    mapping(uint256 => mapping(uint256 => uint256)) internal _tag;
    mapping(uint256 => mapping(uint256 => uint256)) internal _tagAt;
    mapping(uint64 => Claim) internal _claims;

    // ------------------------------------------------------------ ghost state: active, epochs, tokens
    address public ghostActive;
    uint256 internal _since; // block the active client was (re-)elected
    bool internal _mayChangeActive; // the call in flight may legitimately replace the active client
    mapping(uint256 => uint256) internal _epochDoneAt; // latest block head passed the epoch's last round
    mapping(uint256 => uint256) internal _epochFlags; // bit 0 metrics posted, bit 1 rewards paid
    uint256 public ghostPaid; // tokens that left the pool, summed from balance changes

    // ------------------------------------------------------------ counters (each must stay 0)
    uint256 public panics; // reverts carrying Panic(uint256)
    string public lastPanic;
    uint256 public earlyReelects; // reelect() accepted before the active client's deadline
    string public lastEarly;
    uint256 public unexpectedActiveChanges; // active replaced by a call that may not replace it
    uint256 public payMismatches; // a payout differing from the per-epoch rule
    string public lastPayMismatch;
    uint256 public wrongAccepted; // a call that must revert went through
    string public lastWrongAccepted;
    uint256 public rightRefused; // a call that must go through reverted
    string public lastRightRefused;

    // ------------------------------------------------------------ statistics (logged, not asserted)
    uint256 public windowRefusals; // payRewards refused DisputeWindowOpen (a claim of the epoch still disputable)
    uint256 public disputesAccepted;
    uint256 public wrongClaims;
    uint256 public reelections;
    uint256 public expiries;
    uint256 public roundsDone;

    constructor(Mode m, BbvflBase a) {
        mode = m;
        agg = a;
        ops = ISessionOps(address(a));
        token = a.token();
        BbvflBase.Params memory p = a.params();
        M = p.clients;
        N = p.maxCoords;
        LEVELS = p.levels;
        T = p.trainRoundsPerEpoch;
        PER = uint256(p.trainRoundsPerEpoch) + p.evalRoundsPerEpoch;
        EPOCHS = p.epochs;
        TOTAL = p.totalRounds;
        RATE = p.rewardPerSubmission;
        POOL = p.rewardPool;
        ACTIVE_BLOCKS = p.activeBlocks;
        TIMEOUT = p.roundTimeoutBlocks;
        COMMIT = p.commitBlocks;
        REVEAL = p.revealBlocks;
        STALENESS = p.staleness;
        VB = _bitsFor(p.levels);
        SB = _bitsFor(uint256(p.clients) * p.levels);
        // the shape the ghost model assumes (see the contract's notice)
        require(p.evalRoundsPerEpoch >= 1 && p.maxCoords <= 256, "handler: unsupported session shape");
        for (uint64 r = 0; r < PER; r++) {
            (,,,, uint32 coords) = a.roundLayout(r);
            require(coords == p.maxCoords, "handler: rounds of different sizes");
        }
        require((m == Mode.Lane) == (!p.hashed && p.masked), "handler: lane mode is masked, the others plain");
        require(p.levels + 1 < (uint256(1) << VB), "handler: b must leave room for a value above it");
    }

    // ================================================================ actions

    /// An actor registers (register(), no label holders here) with its own key (usually the
    /// next actor not registered yet), a key of the wrong length or another actor's key.
    function register(uint256 who, uint256 kind) public {
        uint256 k = who % ACTORS;
        if (kind % 4 != 0 && idx1[actor(k)] != 0) k = _nextActor(k, 0);
        address a = actor(k);
        (, bytes memory pk) = clientKey(k);
        bool wrong = kind % 8 == 4;
        if (wrong) {
            if (kind % 16 == 4) {
                bytes memory short = new bytes(63);
                for (uint256 j = 0; j < 63; j++) short[j] = pk[j];
                pk = short;
            } else {
                (, pk) = clientKey((k + 1) % ACTORS);
            }
        }
        bool must = !wrong && idx1[a] == 0 && ghostClients.length < M;
        vm.prank(a);
        try agg.register(pk) {
            if (!must) _wrong("register");
            ghostClients.push(a);
            idx1[a] = ghostClients.length;
            if (ghostClients.length == M) _closeBlock = block.number;
        } catch (bytes memory err) {
            _refused(err, must, "register");
        }
        _sync();
    }

    /// An actor commits to its election secret (usually a registered client that has not
    /// committed yet), or sends the empty commitment.
    function commit(uint256 who, uint256 kind) public {
        uint256 k = who % ACTORS;
        if (kind % 4 != 0) k = _nextActor(k, 1);
        address a = actor(k);
        bytes32 c = kind % 8 == 4 ? bytes32(0) : commitmentFor(address(agg), _secret(a), a);
        uint256 i = idx1[a];
        bool must = ghostClients.length == M && i != 0 && (_committed >> (i - 1)) & 1 == 0
            && block.number <= _closeBlock + COMMIT && c != 0;
        vm.prank(a);
        try agg.commit(c) {
            if (!must) _wrong("commit");
            _committed |= uint64(1) << (i - 1);
        } catch (bytes memory err) {
            _refused(err, must, "commit");
        }
        _sync();
    }

    /// An actor reveals its secret (usually a committed client that has not revealed yet), or a
    /// wrong one. The reveal that completes the set runs the election; the handler checks that
    /// it runs exactly then.
    function reveal(uint256 who, uint256 kind) public {
        uint256 k = who % ACTORS;
        if (kind % 4 != 0) k = _nextActor(k, 2);
        address a = actor(k);
        bool right = kind % 8 != 4;
        bytes32 s = right ? _secret(a) : keccak256(abi.encode("not the secret", kind));
        uint256 i = idx1[a];
        uint256 cd = _closeBlock + COMMIT;
        bool must = ghostClients.length == M && !started && !endedUnstarted && i != 0
            && (_committed >> (i - 1)) & 1 == 1 && (_revealed >> (i - 1)) & 1 == 0
            && (_count(_committed) == M || block.number > cd) && block.number <= cd + REVEAL && right;
        vm.prank(a);
        try agg.reveal(s) {
            if (!must) _wrong("reveal");
            _revealed |= uint64(1) << (i - 1);
            bool elects = _revealed == _committed && (_count(_committed) == M || block.number > cd);
            _election(elects, "reveal");
        } catch (bytes memory err) {
            _refused(err, must, "reveal");
        }
        _sync();
    }

    /// Anyone closes the election after the reveal deadline.
    function finalizeElection() public {
        bool must = ghostClients.length == M && !started && !endedUnstarted
            && block.number > _closeBlock + COMMIT + REVEAL;
        try agg.finalizeElection() {
            if (!must) _wrong("finalizeElection");
            _election(true, "finalizeElection");
        } catch (bytes memory err) {
            _refused(err, must, "finalizeElection");
        }
        _sync();
    }

    /// A submission, right or wrong: usually a participant that has not submitted to head yet,
    /// sometimes any actor; usually to head, sometimes to a later round (hashed modes: inside
    /// or outside the staleness window and the ring) or to the round before head; usually a
    /// right payload, sometimes a value above b, a wrong length or (packed) a padding bit set.
    function submit(uint256 who, uint256 ahead, uint256 kind) public {
        uint256 k = who % ACTORS;
        if (kind % 4 != 0 && started && !ended) {
            uint256 ix = _missing(who);
            if (ix != type(uint256).max) k = _actorNumber(ghostClients[ix]);
        }
        address a = actor(k);
        uint64 r = head;
        uint256 am = ahead % 16;
        if (am == 15) r = head == 0 ? 0 : head - 1;
        else if (am >= 11) r = head + uint64(am - 10);
        uint256 i = idx1[a] != 0 ? idx1[a] - 1 : k;
        (bytes memory q, bool bad) = _payload(i, r, kind % 11);
        bool member = idx1[a] != 0 && (parts >> i) & 1 == 1;
        bool fresh = _tag[r % RING][i] != uint256(r) + 1;
        bool open = mode == Mode.Lane ? r == head : _open(r);
        bool must = started && !ended && member && fresh && open && !bad;
        vm.prank(a);
        try ops.submit(r, q) {
            if (!must) _wrong(string.concat("submit r", vx.toString(r), bad ? " bad payload" : " not open/member/fresh"));
            _tag[r % RING][i] = uint256(r) + 1;
            _tagAt[r % RING][i] = block.number;
            if (r == head && _aggrAt == 0 && _complete(head)) _aggrAt = block.number;
        } catch (bytes memory err) {
            _refused(err, must, string.concat("submit r", vx.toString(r)));
        }
        _sync();
    }

    /// Every participant that has not submitted to head submits a right payload (progress);
    /// one time in four one of them drops out of this call (so that rounds time out).
    function submitAll(uint256 seed) public {
        uint256 n = ghostClients.length;
        uint256 skip = seed % 4 == 0 && n != 0 ? (seed / 4) % n : type(uint256).max;
        for (uint256 i = 0; i < n; i++) {
            if (i == skip || (parts >> i) & 1 == 0 || _tag[head % RING][i] == uint256(head) + 1) continue;
            submit(_actorNumber(ghostClients[i]), seed % 11, 5);
        }
    }

    /// Hashed and packed modes: anyone aggregates head with the participants' payloads, right or
    /// wrong (two payloads swapped, or one that does not hash to its submission).
    function aggregate(uint256 kind) public {
        uint64 r = head;
        if (r >= TOTAL) r = uint64(TOTAL - 1);
        bool wrong = kind % 6 == 0 && parts != 0;
        bytes[] memory ps = wrong ? _wrongPayloads(parts, r) : _payloads(parts, r);
        bool must = started && !ended && !_headAgg && _complete(head) && !wrong;
        vm.prank(actor(kind));
        try ops.aggregate(r, ps) {
            if (!must) _wrong("aggregate");
            _sumDone(r);
        } catch (bytes memory err) {
            _refused(err, must, "aggregate");
        }
        _sync();
    }

    /// Optimistic mode: a participant (sometimes any actor) claims head's sum, right or wrong.
    function postSum(uint256 who, uint256 kind) public {
        uint256 k = who % ACTORS;
        if (kind % 4 != 0 && parts != 0) k = _actorNumber(ghostClients[_member(who)]);
        address a = actor(k);
        uint64 r = head;
        if (r >= TOTAL) r = uint64(TOTAL - 1);
        bool wrong = kind % 3 == 0;
        bytes32 s = wrong ? keccak256(abi.encode("a wrong sum", kind)) : keccak256(_packedSum(parts, r));
        uint256 i = idx1[a];
        bool must = started && !ended && i != 0 && (parts >> (i - 1)) & 1 == 1 && !_headAgg && _complete(head);
        vm.prank(a);
        try ops.postSum(r, s) {
            if (!must) _wrong("postSum");
            _claims[r] = Claim(a, s, wrong, true, parts, block.number);
            if (wrong) wrongClaims++;
            _sumDone(r);
        } catch (bytes memory err) {
            _refused(err, must, "postSum");
        }
        _sync();
    }

    /// Optimistic mode: anyone (a client, an outsider, any address) disputes a claim: usually the
    /// latest wrong one still standing, otherwise the claim of a recent round; with the claim's
    /// payloads, or with a wrong claimer or wrong payloads. A dispute of a wrong standing claim
    /// inside its window must be accepted, whatever was posted or paid before (a payout waits for
    /// the window); any other dispute must be refused.
    function dispute(uint256 who, uint256 pick, uint256 kind) public {
        uint64 r = head >= TOTAL ? uint64(TOTAL - 1) : head;
        uint64 back = uint64(pick % 4);
        r = r >= back ? r - back : 0;
        if (kind % 2 == 0) {
            for (uint64 x = uint64(TOTAL); x > 0; x--) {
                Claim storage cx = _claims[x - 1];
                if (cx.standing && cx.wrong) {
                    r = x - 1;
                    break;
                }
            }
        }
        Claim memory c = _claims[r];
        address claimer = c.claimer;
        bool bad = kind % 7 == 3 || (kind % 7 == 5 && c.parts != 0);
        bytes[] memory ps = kind % 7 == 5 ? _wrongPayloads(c.parts, r) : _payloads(c.parts, r);
        if (kind % 7 == 3) claimer = actor(pick % ACTORS + 1) == claimer ? actor(pick % ACTORS + 2) : actor(pick % ACTORS + 1);
        bool disputable = c.standing && c.wrong && !bad && block.number <= c.at + TIMEOUT;
        bool must = disputable;
        address sender = who % 8 < ACTORS ? actor(who) : address(uint160(0xD15B00 + who % 1000));
        if (must && claimer == ghostActive && idx1[claimer] != 0 && (parts >> (idx1[claimer] - 1)) & 1 == 1) {
            _mayChangeActive = true;
        }
        vm.prank(sender);
        try ops.dispute(r, claimer, c.sumHash, ps) {
            if (!must) _wrong("dispute");
            disputesAccepted++;
            _rolledBack(r, claimer);
        } catch (bytes memory err) {
            _rec(err, "dispute");
            if (must) {
                rightRefused++;
                lastRightRefused = string.concat("dispute of wrong claim r", vx.toString(r), _sel(err));
            }
        }
        _sync();
    }

    /// The active client (sometimes any actor) posts head's gradient, of the right length or not.
    function postGradient(uint256 who, uint256 kind) public {
        address a = kind % 4 != 0 ? ghostActive : actor(who);
        uint64 r = head >= TOTAL ? uint64(TOTAL - 1) : head;
        bool rightLen = kind % 5 != 0;
        bytes memory g = new bytes(rightLen ? N * 4 : N * 4 - 4);
        bool ready = mode == Mode.Lane ? _complete(r) : _headAgg;
        bool must = started && !ended && a == ghostActive && a != address(0) && _isTrain(r) && ready && rightLen;
        vm.prank(a);
        try agg.postGradient(r, g, hex"01") {
            if (!must) _wrong("postGradient");
        } catch (bytes memory err) {
            _refused(err, must, "postGradient");
        }
        _sync();
    }

    /// The active client (sometimes any actor) posts an epoch's metrics: usually the oldest
    /// unsettled epoch, sometimes any epoch (one past the session included).
    function postMetrics(uint256 who, uint256 kind, uint256 ep) public {
        address a = kind % 4 != 0 ? ghostActive : actor(who);
        uint32 e = kind % 3 != 0 ? uint32(_unsettled()) : uint32(ep % (EPOCHS + 1));
        bool must = started && a == ghostActive && a != address(0) && e < EPOCHS && _epochComplete(e)
            && _epochFlags[e] & 1 == 0;
        vm.prank(a);
        try agg.postMetrics(e, 700000, 600000, 5) {
            if (!must) _wrong("postMetrics");
            _epochFlags[e] |= 1;
        } catch (bytes memory err) {
            _refused(err, must, "postMetrics");
        }
        _sync();
    }

    /// The active client (sometimes any actor) pays an epoch's rewards. Checks every client's
    /// payout against the per-epoch rule: rewarded becomes max(rewarded, min(accepted, first
    /// round of epoch e + 1)) and the client receives rate times the increase.
    function payRewards(uint256 who, uint256 kind, uint256 ep) public {
        address a = kind % 4 != 0 ? ghostActive : actor(who);
        uint32 e = kind % 3 != 0 ? uint32(_unpaid()) : uint32(ep % (EPOCHS + 1));
        bool due = started && a == ghostActive && a != address(0) && e < EPOCHS && _epochComplete(e)
            && _epochFlags[e] & 2 == 0;
        bool must = due && block.number > _until(e);
        uint256 n = ghostClients.length;
        uint256[] memory acc = new uint256[](n);
        uint256[] memory rew = new uint256[](n);
        uint256[] memory bal = new uint256[](n);
        for (uint256 i = 0; i < n; i++) {
            (acc[i], rew[i]) = _counts(ghostClients[i]);
            bal[i] = token.balanceOf(ghostClients[i]);
        }
        uint256 pool = token.balanceOf(address(agg));
        vm.prank(a);
        try agg.payRewards(e) {
            if (!must) _wrong("payRewards");
            _epochFlags[e] |= 2;
            uint256 cap = (uint256(e) + 1) * PER;
            for (uint256 i = 0; i < n; i++) {
                (, uint256 rew2) = _counts(ghostClients[i]);
                uint256 want = acc[i] < cap ? acc[i] : cap;
                if (want < rew[i]) want = rew[i];
                uint256 got = token.balanceOf(ghostClients[i]) - bal[i];
                if (rew2 != want || got != (want - rew[i]) * RATE) {
                    payMismatches++;
                    lastPayMismatch = string.concat(
                        "payRewards(", vx.toString(e), ") client ", vx.toString(i), ": accepted ", vx.toString(acc[i]),
                        ", rewarded ", vx.toString(rew[i]), " -> ", vx.toString(rew2), ", want ", vx.toString(want),
                        " (head ", vx.toString(head), ")"
                    );
                }
            }
            ghostPaid += pool - token.balanceOf(address(agg));
        } catch (bytes memory err) {
            _refused(err, must, string.concat("payRewards(", vx.toString(e), ")"));
            if (due && !must) {
                // the epoch's window is still open: refused, and with that reason
                if (err.length >= 4 && bytes4(err) == DISPUTE_WINDOW_OPEN) {
                    windowRefusals++;
                } else {
                    rightRefused++;
                    lastRightRefused = string.concat("payRewards(", vx.toString(e), ") inside the window: not DisputeWindowOpen", _sel(err));
                }
            }
        }
        _sync();
    }

    /// Anyone expires head after its timeout: the participants that did not submit are excluded
    /// (lane, masked: head is re-opened for the submitters; hashed modes: head becomes complete).
    function expireRound() public {
        uint64 subs = started && !ended ? _submitters(head) : 0;
        bool must = started && !ended && subs != parts && !_headAgg && block.number > _headAt + TIMEOUT && subs != 0;
        uint256 ai = idx1[ghostActive];
        if (ai != 0 && (subs >> (ai - 1)) & 1 == 0) _mayChangeActive = true;
        try ops.expireRound() {
            if (!must) _wrong("expireRound");
            expiries++;
            parts = subs;
            if (mode == Mode.Lane) {
                for (uint256 i = 0; i < M; i++) _tag[head % RING][i] = 0;
                _headAt = block.number;
                _aggrAt = 0;
            } else {
                _aggrAt = block.number;
            }
        } catch (bytes memory err) {
            _refused(err, must, "expireRound");
        }
        _sync();
    }

    /// Anyone asks for a re-election. Before the call the handler works out from its ghost state
    /// whether the active client is overdue: head's path (head aggregatable since block X, a TRAIN
    /// round in lane mode, any round in the hashed modes: overdue when block > max(X, election of
    /// the active client) + activeBlocks) or the epoch path (oldest unsettled epoch complete since
    /// block Y: overdue when block > max(Y, election) + activeBlocks). An accepted reelect() that
    /// neither path allows is counted.
    function reelect() public {
        (bool ok, string memory why) = _overdue();
        _mayChangeActive = true;
        try agg.reelect() {
            reelections++;
            if (!ok) {
                earlyReelects++;
                lastEarly = why;
            }
            _since = block.number;
        } catch (bytes memory err) {
            _rec(err, "reelect");
        }
        _sync();
    }

    /// Advances 1..3 blocks, or (one time in four) past a round's timeout.
    function roll(uint256 blocks) public {
        vm.roll(block.number + (blocks % 4 == 0 ? TIMEOUT + 1 : 1 + blocks % 3));
    }

    /// Progress: the next honest action of the session (registration, commit, reveal, election,
    /// submissions, aggregation or claim, gradient, metrics, rewards), or a roll when waiting.
    function step(uint256 seed) public {
        if (ghostClients.length < M) {
            register(seed, 1);
        } else if (!started && !endedUnstarted) {
            uint256 cd = _closeBlock + COMMIT;
            if (_count(_committed) < M && block.number <= cd) commit(seed, 1);
            else if (_committed != _revealed && block.number <= cd + REVEAL) reveal(seed, 1);
            else if (block.number > cd + REVEAL) finalizeElection();
            else roll(seed);
        } else if (started) {
            uint32 e = uint32(_unsettled());
            if (e < EPOCHS && _epochComplete(e) && (seed % 3 == 0 || ended)) {
                if (_epochFlags[e] & 1 == 0) postMetrics(0, 1, 0);
                else payRewards(0, 1, 0);
            } else if (ended) {
                return;
            } else if (!_complete(head)) {
                submitAll(seed);
            } else if (mode != Mode.Lane && !_headAgg) {
                if (mode == Mode.Optimistic) postSum(seed, seed % 12 == 0 ? 3 : 1);
                else aggregate(1);
            } else {
                postGradient(0, 1);
            }
        }
    }

    // ================================================================ ghost bookkeeping

    /// After every action: head and active client as the contract reports them; a head change
    /// opens a new round in the ghost (and completes the epochs whose last round it passed).
    function _sync() internal {
        if (started) {
            ended = agg.phase() == BbvflBase.Phase.Ended;
            uint64 cur = agg.currentRound();
            if (cur != head) _moveHead(cur);
            address act = agg.active();
            if (act != ghostActive) {
                if (!_mayChangeActive) {
                    unexpectedActiveChanges++;
                }
                ghostActive = act;
                _since = block.number;
            }
        }
        _mayChangeActive = false;
    }

    function _moveHead(uint64 cur) internal {
        if (cur > head) {
            roundsDone += cur - head;
            for (uint256 e = 0; e < EPOCHS; e++) {
                uint256 last = (e + 1) * PER - 1;
                if (head <= last && last < cur) _epochDoneAt[e] = block.number;
            }
        }
        head = cur;
        _headAt = block.number;
        _headAgg = false;
        _aggrAt = cur < TOTAL && _complete(cur) ? block.number : 0;
    }

    /// The election ran (or should have, `elects`): participants = revealed clients.
    function _election(bool elects, string memory what) internal {
        BbvflBase.Phase ph = agg.phase();
        bool ran = ph == BbvflBase.Phase.Training || ph == BbvflBase.Phase.Ended;
        if (ran != elects) {
            rightRefused++;
            lastRightRefused = string.concat(what, ": election ran when it should not, or did not when it should");
        }
        if (!ran) return;
        if (_revealed == 0) {
            endedUnstarted = true;
            return;
        }
        started = true;
        parts = _revealed;
        _mayChangeActive = true;
        ghostActive = agg.active();
        _since = block.number;
        head = 0;
        _headAt = block.number;
    }

    /// head's sum was emitted by aggregate/postSum: a TRAIN head waits for its gradient.
    function _sumDone(uint64 r) internal {
        if (_isTrain(r)) _headAgg = true;
    }

    /// An accepted dispute of round r: claims of r and later are erased, the claimer excluded
    /// (when it is a participant and not the last one), head = r with its recomputed sum.
    function _rolledBack(uint64 r, address claimer) internal {
        for (uint64 x = r; x < TOTAL; x++) _claims[x].standing = false;
        _claims[r].at = block.number; // the dispute's block bounds the epoch's window from now
        _epochFlags[r / PER] &= ~uint256(1); // the epoch is redone: its metrics are posted again
        uint256 ci = idx1[claimer];
        if (ci != 0 && (parts >> (ci - 1)) & 1 == 1 && _count(parts) >= 2) parts &= ~(uint64(1) << (ci - 1));
        ended = agg.phase() == BbvflBase.Phase.Ended;
        uint64 cur = agg.currentRound();
        for (uint256 e = 0; e < EPOCHS; e++) {
            uint256 last = (e + 1) * PER - 1;
            if (r <= last && last < cur) _epochDoneAt[e] = block.number;
        }
        head = cur;
        _headAt = block.number;
        _headAgg = cur == r && _isTrain(r);
        _aggrAt = block.number;
    }

    /// Whether reelect() may succeed now, and if not a description of why (for the report).
    function _overdue() internal view returns (bool ok, string memory why) {
        if (!started) return (false, "no election yet");
        uint256 A = ACTIVE_BLOCKS;
        uint256 from;
        if (!ended && _aggrAt != 0 && (mode != Mode.Lane || _isTrain(head))) {
            from = _aggrAt > _since ? _aggrAt : _since;
            if (block.number > from + A) return (true, "");
        }
        why = string.concat(
            "reelect at block ", vx.toString(block.number), ": head ", vx.toString(head), " opened at ",
            vx.toString(_headAt), ", aggregatable since ", _aggrAt == 0 ? "never" : vx.toString(_aggrAt),
            ", active elected at ", vx.toString(_since), ", activeBlocks ", vx.toString(A)
        );
        uint256 e = _unsettled();
        if (e < EPOCHS && _epochComplete(e)) {
            uint256 d = _epochDoneAt[e];
            from = d > _since ? d : _since;
            if (_until(e) > from) from = _until(e);
            if (block.number > from + A) return (true, "");
            why = string.concat(why, "; epoch ", vx.toString(e), " complete at ", vx.toString(d));
        }
        return (false, why);
    }

    // ================================================================ helpers

    function actor(uint256 k) public pure returns (address) {
        return clientAddr(k % ACTORS);
    }

    function _actorNumber(address a) internal pure returns (uint256) {
        for (uint256 k = 0; k < ACTORS; k++) {
            if (actor(k) == a) return k;
        }
        revert("handler: not an actor");
    }

    /// From actor k on, the first actor that still has to register (0), commit (1) or reveal (2);
    /// k itself when there is none.
    function _nextActor(uint256 k, uint256 what) internal view returns (uint256) {
        for (uint256 d = 0; d < ACTORS; d++) {
            uint256 x = (k + d) % ACTORS;
            uint256 i = idx1[actor(x)];
            if (what == 0 && i == 0) return x;
            if (what == 1 && i != 0 && (_committed >> (i - 1)) & 1 == 0) return x;
            if (what == 2 && i != 0 && (_committed >> (i - 1)) & 1 == 1 && (_revealed >> (i - 1)) & 1 == 0) {
                return x;
            }
        }
        return k;
    }

    /// A participant (index) that has not submitted to head, from `who` on; max when none.
    function _missing(uint256 who) internal view returns (uint256) {
        uint256 n = ghostClients.length;
        for (uint256 d = 0; d < n; d++) {
            uint256 i = (who % n + d) % n;
            if ((parts >> i) & 1 == 1 && _tag[head % RING][i] != uint256(head) + 1) return i;
        }
        return type(uint256).max;
    }

    /// A participant (index), from `who` on (parts != 0).
    function _member(uint256 who) internal view returns (uint256 i) {
        uint256 n = ghostClients.length;
        for (uint256 d = 0; d < n; d++) {
            i = (who % n + d) % n;
            if ((parts >> i) & 1 == 1) return i;
        }
    }

    function _secret(address a) internal pure returns (bytes32) {
        return keccak256(abi.encode("election secret", a));
    }

    function _count(uint64 x) internal pure returns (uint256 n) {
        for (; x != 0; x &= x - 1) n++;
    }

    function _bitsFor(uint256 x) internal pure returns (uint256 n) {
        while ((uint256(1) << n) <= x) n++;
    }

    function _isTrain(uint64 r) internal view returns (bool) {
        return r % PER < T;
    }

    function _trainBefore(uint256 x) internal view returns (uint256) {
        uint256 pos = x % PER;
        return (x / PER) * T + (pos < T ? pos : T);
    }

    /// Hashed modes: round r accepts submissions (head <= r < total, inside the ring, at most
    /// `staleness` TRAIN rounds in [head, r)).
    function _open(uint64 r) internal view returns (bool) {
        return r >= head && r < TOTAL && r - head < RING && _trainBefore(r) - _trainBefore(head) <= STALENESS;
    }

    /// Participants (bit = index) whose submission to round r stands.
    function _submitters(uint64 r) internal view returns (uint64 got) {
        for (uint256 i = 0; i < ghostClients.length; i++) {
            if ((parts >> i) & 1 == 1 && _tag[r % RING][i] == uint256(r) + 1) got |= uint64(1) << i;
        }
    }

    function _complete(uint64 r) internal view returns (bool) {
        return started && parts != 0 && _submitters(r) == parts;
    }

    function _epochComplete(uint256 e) internal view returns (bool) {
        return head > (e + 1) * PER - 1;
    }

    /// Oldest epoch whose metrics or rewards are missing.
    function _unsettled() internal view returns (uint256 e) {
        while (e < EPOCHS && _epochFlags[e] == 3) e++;
    }

    /// Last block of epoch e's dispute window (optimistic mode: its last round's claim or dispute
    /// plus the window; other modes 0): payRewards(e) waits until it has passed.
    function _until(uint256 e) internal view returns (uint256) {
        if (mode != Mode.Optimistic || e >= EPOCHS) return 0;
        return _claims[uint64((e + 1) * PER - 1)].at + TIMEOUT;
    }

    /// Oldest epoch whose rewards are not paid.
    function _unpaid() internal view returns (uint256 e) {
        while (e < EPOCHS && _epochFlags[e] & 2 != 0) e++;
    }

    function _counts(address a) internal view returns (uint256 acc, uint256 rew) {
        (,,,,,, uint32 x, uint32 y) = agg.clientInfo(a);
        return (x, y);
    }

    /// Value j of client i's right payload for round r (0..b).
    function _val(uint256 i, uint64 r, uint256 j) internal view returns (uint256) {
        return uint256(keccak256(abi.encode(SALT, i, r, j))) % (LEVELS + 1);
    }

    function _vals(uint256 i, uint64 r) internal view returns (uint256[] memory v) {
        v = new uint256[](N);
        for (uint256 j = 0; j < N; j++) v[j] = _val(i, r, j);
    }

    /// Bit-sliced packing of at most 256 values (one block): `bits` planes of ceil(n/8) bytes,
    /// plane k = bit k of every value, value t at bit 7 - t%8 of byte t/8.
    function _pack(uint256[] memory v, uint256 bits) internal pure returns (bytes memory out) {
        uint256 pb = (v.length + 7) / 8;
        out = new bytes(bits * pb);
        for (uint256 k = 0; k < bits; k++) {
            for (uint256 t = 0; t < v.length; t++) {
                if ((v[t] >> k) & 1 == 1) out[k * pb + t / 8] |= bytes1(uint8(0x80 >> (t % 8)));
            }
        }
    }

    /// Client i's payload for round r in this mode's format; variant 0..3 makes it wrong (a value
    /// above b, one byte too long, one too short, a padding bit) where the mode checks that.
    function _payload(uint256 i, uint64 r, uint256 variant) internal view returns (bytes memory q, bool bad) {
        if (mode == Mode.Lane) {
            // masked lanes: any 16-bit values, only the length is checked
            q = new bytes(2 * N + (variant == 1 ? 1 : 0) - (variant == 2 ? 1 : 0));
            for (uint256 j = 0; j < q.length; j++) q[j] = bytes1(uint8(uint256(keccak256(abi.encode(SALT, i, r, j)))));
            return (q, variant == 1 || variant == 2);
        }
        uint256[] memory v = _vals(i, r);
        // a value above b: any byte above b (hashed), the largest VB-bit value (packed, b < 2^VB - 1)
        if (variant == 0) v[uint256(r) % N] = mode == Mode.Hashed ? LEVELS + 1 + uint256(r) % 100 : (uint256(1) << VB) - 1;
        if (mode == Mode.Hashed) {
            q = new bytes(N + (variant == 1 ? 1 : 0) - (variant == 2 ? 1 : 0));
            for (uint256 j = 0; j < N; j++) {
                if (j < q.length) q[j] = bytes1(uint8(v[j]));
            }
            return (q, variant <= 2);
        }
        q = _pack(v, VB);
        if (variant == 1) q = bytes.concat(q, hex"00");
        if (variant == 2) {
            bytes memory s = new bytes(q.length - 1);
            for (uint256 j = 0; j < s.length; j++) s[j] = q[j];
            q = s;
        }
        if (variant == 3 && N % 8 != 0) q[q.length - 1] |= bytes1(uint8(1)); // a bit past the last value
        return (q, variant <= 2 || (variant == 3 && N % 8 != 0));
    }

    /// The participants' (bitmap `who`) right payloads for round r, in index order.
    function _payloads(uint64 who, uint64 r) internal view returns (bytes[] memory ps) {
        ps = new bytes[](_count(who));
        uint256 k;
        for (uint256 i = 0; i < 64 && who >> i != 0; i++) {
            if ((who >> i) & 1 == 1) (ps[k++],) = _payload(i, r, 5);
        }
    }

    /// The packed (SB-bit) sum of the right payloads of `who` for round r.
    function _packedSum(uint64 who, uint64 r) internal view returns (bytes memory) {
        uint256[] memory s = new uint256[](N);
        for (uint256 i = 0; i < 64 && who >> i != 0; i++) {
            if ((who >> i) & 1 == 0) continue;
            for (uint256 j = 0; j < N; j++) s[j] += _val(i, r, j);
        }
        return _pack(s, SB);
    }

    /// Wrong payloads for round r: two payloads swapped (when they differ), else the first one
    /// replaced by a well-formed payload of another round (same length, another hash).
    function _wrongPayloads(uint64 who, uint64 r) internal view returns (bytes[] memory ps) {
        ps = _payloads(who, r);
        if (ps.length >= 2 && keccak256(ps[0]) != keccak256(ps[1])) {
            (ps[0], ps[1]) = (ps[1], ps[0]);
        } else if (ps.length >= 1) {
            (ps[0],) = _payload(0, r + uint64(TOTAL), 5);
        }
    }

    // ================================================================ revert bookkeeping

    /// Records a revert: Panic(uint256) is counted with the action and the panic code.
    function _rec(bytes memory err, string memory what) internal {
        if (err.length >= 36 && bytes4(err) == PANIC) {
            uint256 code;
            assembly ("memory-safe") {
                code := mload(add(err, 36))
            }
            panics++;
            lastPanic = string.concat(what, ": Panic(", vx.toString(code), ") at block ", vx.toString(block.number));
        }
    }

    /// A revert of a call that had to go through is counted with its selector.
    function _refused(bytes memory err, bool must, string memory what) internal {
        _rec(err, what);
        if (must) {
            rightRefused++;
            lastRightRefused = string.concat(what, " refused at block ", vx.toString(block.number), _sel(err));
        }
    }

    function _wrong(string memory what) internal {
        wrongAccepted++;
        lastWrongAccepted = string.concat(what, " accepted at block ", vx.toString(block.number));
    }

    function _sel(bytes memory err) internal pure returns (string memory) {
        if (err.length < 4) return ", empty revert";
        return string.concat(", selector ", vx.toString(uint256(uint32(bytes4(err)))));
    }

    // ================================================================ views for the invariants

    /// Whether the contract's participant list is the ghost's.
    function participantsMatch() external view returns (bool) {
        address[] memory ps = agg.participants();
        if (!started) return ps.length == 0;
        if (ps.length != _count(parts)) return false;
        for (uint256 k = 0; k < ps.length; k++) {
            uint256 i = idx1[ps[k]];
            if (i == 0 || (parts >> (i - 1)) & 1 == 0) return false;
        }
        return true;
    }

    function clientCount() external view returns (uint256) {
        return ghostClients.length;
    }
}
