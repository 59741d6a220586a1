// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {BbvflRewardToken} from "./BbvflRewardToken.sol";

/// @title bbvfl on-chain aggregator
/// @notice One training session of DP-BBVFL: registration, commit-reveal election of the active
/// client, per-round aggregation of the clients' quantized embeddings in packed lanes, gradient and
/// fusion-parameter posts, metric posts and ERC-20 rewards. Every state change emits an event; the
/// event log alone is enough to recompute every sum, the election, the minibatch seed and every
/// payment.
///
/// Interface notes (what the clients and the auditor rely on):
/// - Constructor takes one `Config` tuple. All of its fields are static, so its ABI encoding is the
///   same as the flat argument list (M, B, P, b, betaMicro, masked, R = batchesPerEpoch,
///   K = window, NE = evalRows, ER = evalRowsPerRound, trainRows, testRows, staleness, hashed,
///   epochs, rewardPerSubmission, rewardPool, commitBlocks, revealBlocks, activeBlocks,
///   roundTimeoutBlocks). This contract is the lane-storage mode: hashed must be false and
///   staleness 0 (BbvflHashAggregator takes the same tuple for the hashed mode). trainRows and
///   testRows are only recorded (trainRows >= R*B, testRows >= NE): with the seed they let an
///   auditor re-derive every minibatch from the chain alone. params() returns the Config fields
///   in the same order, then T, V, laneBits, token, totalRounds, maxCoords.
///   It deploys its own BbvflRewardToken whose whole supply (rewardPool) is minted to this contract;
///   `token()` returns it. The pool must cover rewardPerSubmission * M * totalRounds.
/// - Deadlines are block counts. Registration closes at block C when the M-th client registers;
///   commits are accepted up to block C + commitBlocks (inclusive), reveals up to
///   C + commitBlocks + revealBlocks (inclusive). Reveals open when every registered client has
///   committed or the commit deadline has passed (so nobody reveals before the last commit).
/// - Windows: an epoch has R training minibatches of B rows, carried K at a time: T = ceil(R/K)
///   TRAIN rounds, window w carrying nb = min(K, R - w*K) consecutive minibatches (batches w*K ..
///   w*K+nb-1 of the epoch's schedule; the last window may be shorter, a window never crosses an
///   epoch), so rows = nb*B. Then V = ceil(NE/ER) EVAL rounds (0 when NE = 0), eval round v
///   carrying the test rows v*ER .. v*ER+rows-1 in test-set order, rows = min(ER, NE - v*ER).
///   A round's coords = rows*P; roundLayout(r) returns all of it. K = 1, NE = V*B, ER = B is the
///   protocol of one minibatch per round. Ring slots are sized for the largest round (maxCoords).
/// - Rounds are numbered globally from 0: epoch = r / (T+V), pos = r % (T+V); pos < T is a TRAIN
///   round (window pos), otherwise an EVAL round (eval round pos - T). Only `currentRound()` is open.
///   A complete TRAIN round opens the next one when the active client posts its gradient; a
///   complete EVAL round opens the next one at once. After the last round: SessionEnded.
/// - submit(round, q): plain mode q is coords bytes (the round's rows, row-major, P values per
///   row), one value per byte, each <= b; masked mode q is coords 16-bit big-endian lanes
///   (2*coords bytes), no range check, sums wrap mod 2^16. The running sum lives in a ring of RING
///   round slots of ceil(maxCoords*laneBytes/32) words each; the first words of a slot,
///   concatenated and cut to coords*laneBytes, are the flat sum (coordinate j at byte offset
///   j*laneBytes, big-endian). roundSum() and RoundCompleted carry exactly those bytes;
///   RoundCompleted also states how many submissions the sum covers. The first
///   submission of a round overwrites the slot, later ones add lane-wise (SWAR, no per-byte loops).
///   There is no per-slot header word: only the current round can be written, so the submission
///   count lives in the one hot state word and a slot's round is implied by the ring position.
///   roundSum(r) works while r is complete and r + RING > currentRound; older sums are in the
///   RoundCompleted events.
/// - Re-election (reelect): the new seed is keccak256(abi.encodePacked(previous election seed,
///   uint64(currentRound))); when more than one participant is left the new active client is
///   drawn from the participants OTHER than the current one, in client index order:
///   others[uint256(newSeed) % (n - 1)]. `seed()` stays the session seed S (it drives the
///   minibatch schedule and never changes); `electionSeed()` is the latest seed of the chain.
/// - Round timeout (beyond the issue text): when the open round has not completed within
///   roundTimeoutBlocks blocks of opening and at least one client has submitted, anyone may call
///   expireRound(): participants that did not submit are excluded (reason 3) and the round
///   completes with the submissions it has. If the active client was excluded that way a new
///   active client is drawn from the seed chain (Elected reason 2). Masked mode differs (the
///   missing clients' masks would not cancel): the round's submissions are voided and the round
///   re-opens for the clients that submitted (RoundReopened with their index bitmap, a fresh
///   timeout); they submit again, masked for the new set (docs/MASKED.md).
/// - Rewards: payRewards(e) pays every client (accepted - rewarded) * rewardPerSubmission, i.e.
///   all accepted submissions not paid yet at the time of the call, and sets rewarded = accepted.
///   When nobody is due anything it emits one RewardsPaid(e, address(0), 0, 0) so that every
///   payRewards call leaves an event.
/// - Per-client state is one storage word (registered, excluded, committed, revealed, index,
///   accepted count frozen at exclusion, rewarded count). A submission does NOT write it: the open
///   round's submissions are a bitmap (bit = client index) in the hot state word, so a steady-state
///   submit writes only the lane words and that one hot word. Because a round completes only when
///   every participant has submitted, a participant's accepted count is currentRound + its bit;
///   clientInfo() derives it (and lastRoundPlus1, which equals it). Hence M <= 64.
/// - reelect() (anyone) succeeds when the open TRAIN round has been complete for more than
///   activeBlocks blocks without a gradient, or when the oldest epoch with missing metrics or
///   rewards completed more than activeBlocks blocks ago (measured from the latest epoch
///   completion, see lastEpochCompleted(), so never too early); both counted from the later of
///   that event and the current active client's election. The new active client resumes from
///   the last GradientPosted (lastFusionRound(), lastFusionParamsHash() to check the bytes).
/// - Commit-reveal leaves one known bias: the last client to reveal can withhold its secret and
///   so choose between two seeds, at the price of being excluded from the session.
/// - Masked mode: the contract cannot range-check masked values (they look uniform); a masked
///   client could add any value to the sum. Only plain mode enforces values <= b.
/// - currentRound() returns totalRounds once the session has ended.
/// - Errors are require-style revert strings (Error(string)).
/// - Labels split across clients (DP-BBVFL Algorithm 2, lines 11-14): a client that holds labels
///   registers with registerLabelHolder(pubkey) instead of register(pubkey) (same checks, plus the
///   LabelHolder event). The set of label holders is therefore fixed when registration closes and
///   auditable from the events (and labelHolders(), a bitmap by client index). Which rows each
///   holder labels is the holders' business (the contract does not see rows). In a TRAIN round that
///   is complete and whose gradient is not posted yet, each label holder may post once
///   postLabelGradient(round, grad): dLoss/dlogits of the fusion head for its rows of the batch
///   (rows*C IEEE-754 binary32, big-endian, C logits per row, rows = the round's rows, zero on
///   rows it does not hold; the contract checks only that the length is a non-zero multiple of
///   4*rows, at most 4*rows*256). The active client sums the posts (and its own rows) before its
///   backward. postGradient does not wait for them: the active client decides (a session in
///   which the active client holds every label needs no post). The holders that posted for the
///   latest round are one reused storage word
///   (labelPosts()); the submit path is untouched. Note: such a gradient reveals the labels of
///   its rows to anyone who can compute the logits (the sum and the head parameters are public).
/// - postGradient(round, gradient, fusionParams): gradient is coords binary32 big-endian: the
///   window's nb batches' dLoss/dh_hat concatenated in batch order, each B*P row-major.
/// - Excluded reasons: 1 no commit by the commit deadline, 2 no reveal by the reveal deadline,
///   3 missed a round (expireRound). Elected reasons: 0 election, 1 re-election after a missed
///   active deadline, 2 active client excluded by expireRound.
contract BbvflAggregator {
    /// Session parameters, passed to the constructor as one static tuple.
    struct Config {
        uint8 clients; // M
        uint32 batch; // B
        uint32 dim; // P
        uint8 levels; // b, values 0..b
        uint32 betaMicro; // beta * 1e6
        bool masked;
        uint32 batchesPerEpoch; // R, training minibatches per epoch
        uint32 window; // K, minibatches per training round (1..R)
        uint32 evalRows; // NE, test rows evaluated per epoch (0: no eval rounds)
        uint32 evalRowsPerRound; // ER, test rows per eval round
        uint32 trainRows; // N_train (>= R*B), size of the schedule's permutation
        uint32 testRows; // N_test (>= NE)
        uint8 staleness; // s (lane mode: 0)
        bool hashed; // hashed aggregation (BbvflHashAggregator); lane mode: false
        uint32 epochs;
        uint256 rewardPerSubmission;
        uint256 rewardPool;
        uint64 commitBlocks;
        uint64 revealBlocks;
        uint64 activeBlocks;
        uint64 roundTimeoutBlocks;
    }

    /// Everything a client needs, returned by params() in one call.
    struct Params {
        uint8 clients;
        uint32 batch;
        uint32 dim;
        uint8 levels;
        uint32 betaMicro;
        bool masked;
        uint32 batchesPerEpoch;
        uint32 window;
        uint32 evalRows;
        uint32 evalRowsPerRound;
        uint32 trainRows;
        uint32 testRows;
        uint8 staleness;
        bool hashed;
        uint32 epochs;
        uint256 rewardPerSubmission;
        uint256 rewardPool;
        uint64 commitBlocks;
        uint64 revealBlocks;
        uint64 activeBlocks;
        uint64 roundTimeoutBlocks;
        uint32 trainRoundsPerEpoch; // T = ceil(R/K)
        uint32 evalRoundsPerEpoch; // V = ceil(NE/ER), 0 when NE = 0
        uint8 laneBits;
        address token;
        uint64 totalRounds;
        uint32 maxCoords; // coordinates of the largest round
    }

    enum Phase {
        Registration,
        Commit,
        Reveal,
        Training,
        Ended
    }

    /// The one storage word every submission touches.
    struct Hot {
        uint64 round; // the open round
        uint8 count; // submissions to the open round
        uint8 n; // participants
        bool started; // election done
        bool ended; // session over
        uint40 openedAt; // block the open round opened
        uint40 completedAt; // block the last round completed
        uint64 submitted; // bit i set: client index i submitted to the open round
    }

    // raw layout of the Hot word: round 0..63, count 64..71, n 72..79, started 80..87,
    // ended 88..95, openedAt 96..135, completedAt 136..175, submitted 176..239
    uint256 private constant HOT_SH_COUNT = 64;
    uint256 private constant HOT_SH_N = 72;
    uint256 private constant HOT_STARTED = 1 << 80;
    uint256 private constant HOT_ENDED = 1 << 88;
    uint256 private constant HOT_SH_SUBMITTED = 176;

    uint256 public constant RING = 4;
    uint256 public constant MAX_FUSION_PARAMS = 262144;
    uint256 private constant SUMS_BASE = uint256(keccak256("bbvfl.aggregator.sums"));

    // per-client word layout
    uint256 private constant F_REG = 1;
    uint256 private constant F_EXCL = 2;
    uint256 private constant F_COMMIT = 4;
    uint256 private constant F_REVEAL = 8;
    uint256 private constant F_LABEL = 16;
    uint256 private constant SH_INDEX = 8;
    uint256 private constant SH_ACC = 16; // accepted submissions, frozen when excluded, 32 bits
    uint256 private constant SH_REW = 48; // rewarded submissions, 32 bits
    uint256 private constant M32 = 0xFFFFFFFF;

    // SWAR constants
    uint256 private constant H8 = 0x8080808080808080808080808080808080808080808080808080808080808080;
    uint256 private constant L8 = 0x0101010101010101010101010101010101010101010101010101010101010101;
    uint256 private constant H16 = 0x8000800080008000800080008000800080008000800080008000800080008000;
    uint256 private constant L16 = 0x0001000100010001000100010001000100010001000100010001000100010001;
    uint256 private constant C16 = 0x0100010001000100010001000100010001000100010001000100010001000100;

    uint8 private immutable M;
    uint32 private immutable B;
    uint32 private immutable P;
    uint8 private immutable LEVELS;
    uint32 private immutable BETA_MICRO;
    bool private immutable MASKED;
    uint32 private immutable R_BATCHES;
    uint32 private immutable K_WINDOW;
    uint32 private immutable NE;
    uint32 private immutable ER;
    uint32 private immutable TRAIN_ROWS;
    uint32 private immutable TEST_ROWS;
    uint32 private immutable T;
    uint32 private immutable V;
    uint32 private immutable EPOCHS;
    uint256 private immutable RATE;
    uint256 private immutable POOL;
    uint64 private immutable COMMIT_BLOCKS;
    uint64 private immutable REVEAL_BLOCKS;
    uint64 private immutable ACTIVE_BLOCKS;
    uint64 private immutable TIMEOUT_BLOCKS;
    uint8 private immutable LANE_BITS;
    uint64 private immutable TOTAL_ROUNDS;
    uint256 private immutable MAX_COORDS;
    uint256 private immutable LANE_WORDS; // words of one ring slot (largest round)
    uint256 private immutable RANGE_K; // (255 - b) in every lane, for the SWAR range check
    BbvflRewardToken public immutable token;

    Hot private _hot;
    mapping(address => uint256) private _client;
    mapping(address => bytes) private _pubkey;
    mapping(address => bytes32) private _commitment;
    mapping(address => bytes32) private _secret;
    address[] private _clients;
    address[] private _participants;
    uint8 private _committed;
    uint8 private _revealed;
    uint64 private _closeBlock;
    bytes32 private _seed;
    bytes32 private _electionSeed;
    address private _active;
    uint64 private _activeSince;
    bytes32 private _fusionHash;
    uint64 private _fusionRound;
    uint32 private _unsettled; // lowest epoch whose metrics or rewards are still missing
    uint64 private _labelHolders; // bit i: client index i registered as a label holder
    // label-gradient posts of the latest round posted to: round << 64 | bitmap of the holders' indices
    uint256 private _labelPosts;
    // epoch => bit 0 metrics posted, bit 1 rewards paid
    mapping(uint32 => uint256) private _epoch;
    // latest completed epoch: EPOCH_DONE_SET | (epoch + 1) << 64 | completion block
    uint256 private _epochDone;
    uint256 private constant EPOCH_DONE_SET = 1 << 255;

    event Registered(address indexed client, uint8 index, bytes pubkey);
    /// The client registered (Registered, same transaction) as a label holder.
    event LabelHolder(address indexed client, uint8 index);
    /// A label holder's dLoss/dlogits for its rows of TRAIN round `round` (see the header).
    event LabelGradientPosted(uint64 indexed round, address indexed client, bytes grad);
    event Committed(address indexed client, bytes32 commitment);
    event Revealed(address indexed client, bytes32 secret);
    event Excluded(address indexed client, uint8 reason);
    event Elected(bytes32 seed, address indexed active, uint64 fromRound, uint8 participants, uint8 reason);
    event Submitted(uint64 indexed round, address indexed client, bytes32 dataHash);
    /// The sum of round `round` (see the header for the layout) and the number of submissions it
    /// covers: fewer than the session's M after a dropout (expireRound) or an exclusion. Anyone
    /// decoding the sum (h_hat = C/(beta*b)*(sum - b*contributors/2)) takes the count from here,
    /// never from a later read of the participant set.
    event RoundCompleted(uint64 indexed round, uint8 contributors, bytes sum);
    event GradientPosted(uint64 indexed round, address indexed active, bytes gradient, bytes fusionParams);
    event MetricsPosted(
        uint32 indexed epoch, address indexed active, uint32 aurocMicro, uint32 accuracyMicro, uint64 lossMicro
    );
    event RewardsPaid(uint32 indexed epoch, address indexed client, uint256 amount, uint32 submissions);
    event SessionEnded(uint64 rounds);
    /// Masked mode: expireRound voided the open round's submissions and re-opened it for the
    /// participant set `participants` (bit i = client index i), n = its size.
    event RoundReopened(uint64 indexed round, uint64 participants, uint8 n);

    constructor(Config memory c) {
        require(c.clients >= 1 && c.clients <= 64, "M must be 1..64");
        require(c.batch >= 1 && c.dim >= 1, "B and P must be >= 1");
        require(c.levels >= 1, "b must be >= 1");
        require(c.betaMicro <= 500000, "beta must be <= 0.5");
        require(c.batchesPerEpoch >= 1, "R must be >= 1");
        require(c.window >= 1 && c.window <= c.batchesPerEpoch, "window must be 1..R");
        require(c.evalRows == 0 || c.evalRowsPerRound >= 1, "evalRowsPerRound must be >= 1");
        require(c.trainRows >= uint256(c.batchesPerEpoch) * c.batch, "trainRows below R*B");
        require(c.testRows >= c.evalRows, "testRows below evalRows");
        require(!c.hashed, "hashed: deploy BbvflHashAggregator");
        require(c.staleness == 0, "staleness needs hashed mode");
        require(c.epochs >= 1, "epochs must be >= 1");
        require(c.commitBlocks >= 1 && c.revealBlocks >= 1, "commit/reveal deadlines must be >= 1");
        require(c.activeBlocks >= 1 && c.roundTimeoutBlocks >= 1, "active/round deadlines must be >= 1");
        require(
            (c.commitBlocks | c.revealBlocks | c.activeBlocks | c.roundTimeoutBlocks) < 1 << 32,
            "deadlines must be < 2^32 blocks"
        );
        uint256 t = (uint256(c.batchesPerEpoch) + c.window - 1) / c.window;
        uint256 v = c.evalRows == 0 ? 0 : (uint256(c.evalRows) + c.evalRowsPerRound - 1) / c.evalRowsPerRound;
        uint256 er = c.evalRowsPerRound < c.evalRows ? c.evalRowsPerRound : c.evalRows;
        uint256 rows = uint256(c.window) * c.batch;
        if (er > rows) rows = er;
        uint256 coords = rows * c.dim;
        require(coords <= 1 << 20, "round above 2^20 coordinates");
        uint256 total = uint256(c.epochs) * (t + v);
        require(total <= M32, "too many rounds");
        uint256 sumMax = uint256(c.clients) * c.levels;
        uint8 bits;
        if (c.masked) bits = 16;
        else if (sumMax < 256) bits = 8;
        else if (sumMax < 65536) bits = 16;
        else revert("M*b too large for 16-bit lanes");
        require(c.rewardPool / total / c.clients >= c.rewardPerSubmission, "pool below rate * M * rounds");

        M = c.clients;
        B = c.batch;
        P = c.dim;
        LEVELS = c.levels;
        BETA_MICRO = c.betaMicro;
        MASKED = c.masked;
        R_BATCHES = c.batchesPerEpoch;
        K_WINDOW = c.window;
        NE = c.evalRows;
        ER = c.evalRowsPerRound;
        TRAIN_ROWS = c.trainRows;
        TEST_ROWS = c.testRows;
        T = uint32(t);
        V = uint32(v);
        EPOCHS = c.epochs;
        RATE = c.rewardPerSubmission;
        POOL = c.rewardPool;
        COMMIT_BLOCKS = c.commitBlocks;
        REVEAL_BLOCKS = c.revealBlocks;
        ACTIVE_BLOCKS = c.activeBlocks;
        TIMEOUT_BLOCKS = c.roundTimeoutBlocks;
        LANE_BITS = bits;
        TOTAL_ROUNDS = uint64(total);
        MAX_COORDS = coords;
        LANE_WORDS = (coords * (bits / 8) + 31) / 32;
        RANGE_K = (255 - uint256(c.levels)) * (bits == 8 ? L8 : L16);
        token = new BbvflRewardToken(c.rewardPool);
        _epochDone = EPOCH_DONE_SET;
    }

    // ------------------------------------------------------------------ registration

    /// Registers the caller with its 64-byte uncompressed secp256k1 public key (x || y).
    function register(bytes calldata pubkey) external {
        _register(pubkey);
    }

    /// register() for a client that holds labels (of some or all rows): it may then post label
    /// gradients (postLabelGradient). Fixed for the session.
    function registerLabelHolder(bytes calldata pubkey) external {
        uint256 index = _register(pubkey);
        _client[msg.sender] |= F_LABEL;
        _labelHolders |= uint64(1) << uint8(index);
        emit LabelHolder(msg.sender, uint8(index));
    }

    function _register(bytes calldata pubkey) private returns (uint256 index) {
        require(_clients.length < M, "registration closed");
        require(pubkey.length == 64, "pubkey must be 64 bytes");
        require(address(uint160(uint256(keccak256(pubkey)))) == msg.sender, "pubkey does not match sender");
        require(_client[msg.sender] & F_REG == 0, "already registered");
        index = _clients.length;
        _client[msg.sender] = F_REG | (index << SH_INDEX);
        _clients.push(msg.sender);
        _pubkey[msg.sender] = pubkey;
        if (index + 1 == M) _closeBlock = uint64(block.number);
        emit Registered(msg.sender, uint8(index), pubkey);
    }

    // ------------------------------------------------------------------ election

    /// Commits to a secret: c = keccak256(abi.encodePacked(secret, msg.sender)).
    function commit(bytes32 c) external {
        require(_clients.length == M, "registration open");
        require(block.number <= _closeBlock + COMMIT_BLOCKS, "commit deadline passed");
        uint256 w = _client[msg.sender];
        require(w & F_REG != 0, "not registered");
        require(w & F_COMMIT == 0, "already committed");
        require(c != bytes32(0), "empty commitment");
        _client[msg.sender] = w | F_COMMIT;
        _commitment[msg.sender] = c;
        _committed += 1;
        emit Committed(msg.sender, c);
    }

    /// Reveals the committed secret. The election runs in the reveal that completes the set.
    function reveal(bytes32 secret) external {
        require(_clients.length == M, "registration open");
        require(!_hot.started && !_hot.ended, "election over");
        uint256 commitDeadline = _closeBlock + COMMIT_BLOCKS;
        require(_committed == M || block.number > commitDeadline, "reveal not open");
        require(block.number <= commitDeadline + REVEAL_BLOCKS, "reveal deadline passed");
        uint256 w = _client[msg.sender];
        require(w & F_COMMIT != 0, "not committed");
        require(w & F_REVEAL == 0, "already revealed");
        require(keccak256(abi.encodePacked(secret, msg.sender)) == _commitment[msg.sender], "secret does not match commitment");
        _client[msg.sender] = w | F_REVEAL;
        _secret[msg.sender] = secret;
        _revealed += 1;
        emit Revealed(msg.sender, secret);
        if (_revealed == _committed && (_committed == M || block.number > commitDeadline)) _elect();
    }

    /// After the reveal deadline anyone may close the election: non-committers and non-revealers
    /// are excluded. With no reveal at all the session ends.
    function finalizeElection() external {
        require(_clients.length == M, "registration open");
        require(!_hot.started && !_hot.ended, "election over");
        require(block.number > uint256(_closeBlock) + COMMIT_BLOCKS + REVEAL_BLOCKS, "reveal deadline not passed");
        _elect();
    }

    function _elect() private {
        bytes memory packed;
        uint256 n = _clients.length;
        for (uint256 i = 0; i < n; i++) {
            address a = _clients[i];
            uint256 w = _client[a];
            if (w & F_REVEAL != 0) {
                _participants.push(a);
                packed = bytes.concat(packed, _secret[a]);
            } else {
                _client[a] = w | F_EXCL;
                emit Excluded(a, w & F_COMMIT == 0 ? 1 : 2);
            }
        }
        uint256 np = _participants.length;
        Hot memory h = _hot;
        if (np == 0) {
            h.ended = true;
            _hot = h;
            emit SessionEnded(0);
            return;
        }
        bytes32 s = keccak256(packed);
        _seed = s;
        _electionSeed = s;
        address act = _participants[uint256(s) % np];
        _active = act;
        _activeSince = uint64(block.number);
        h.started = true;
        h.n = uint8(np);
        h.round = 0;
        h.count = 0;
        h.openedAt = uint40(block.number);
        _hot = h;
        emit Elected(s, act, 0, uint8(np), 0);
    }

    /// Re-election when the active client is overdue: the open TRAIN round has been complete for
    /// more than activeBlocks blocks without a gradient, or the oldest epoch whose metrics or
    /// rewards are missing has been complete that long (counted from the later of that event and
    /// the current active client's election).
    function reelect() external {
        Hot memory h = _hot;
        require(h.started, "no election yet");
        uint256 since = _activeSince;
        bool overdue;
        if (!h.ended && h.count == h.n && _isTrain(h.round)) {
            uint256 from = h.completedAt > since ? h.completedAt : since;
            overdue = block.number > from + ACTIVE_BLOCKS;
        }
        if (!overdue) {
            uint32 e = _unsettled;
            if (e < EPOCHS && _epochComplete(e, h)) {
                // completion block of the latest completed epoch: >= that of epoch e, so the
                // deadline is never earlier than it should be
                uint256 doneAt = uint64(_epochDone);
                uint256 from = doneAt > since ? doneAt : since;
                overdue = block.number > from + ACTIVE_BLOCKS;
            }
        }
        require(overdue, "active client not overdue");
        _reelect(h.round, 1);
    }

    function _reelect(uint64 round, uint8 reason) private {
        bytes32 s = keccak256(abi.encodePacked(_electionSeed, round));
        _electionSeed = s;
        address cur = _active;
        uint256 np = _participants.length;
        address next;
        bool curIn = _client[cur] & F_EXCL == 0;
        if (!curIn) {
            next = _participants[uint256(s) % np];
        } else if (np == 1) {
            next = cur;
        } else {
            uint256 k = uint256(s) % (np - 1);
            // k-th participant other than the current active one, in index order
            for (uint256 i = 0; i < np; i++) {
                address a = _participants[i];
                if (a == cur) continue;
                if (k == 0) {
                    next = a;
                    break;
                }
                k--;
            }
        }
        _active = next;
        _activeSince = uint64(block.number);
        emit Elected(s, next, round, uint8(np), reason);
    }

    // ------------------------------------------------------------------ aggregation

    /// Submits this client's quantized embedding for `round` (see the header for the format).
    function submit(uint64 round, bytes calldata q) external {
        // The hot word is handled as a raw word here (same layout as the Hot struct: Solidity packs
        // members from the low-order end), which keeps the steady-state path lean.
        uint256 hw;
        assembly ("memory-safe") {
            hw := sload(_hot.slot)
        }
        require(hw & HOT_STARTED != 0, "not training");
        require(hw & HOT_ENDED == 0, "session over");
        uint256 cur = hw & 0xFFFFFFFFFFFFFFFF;
        require(round <= cur, "round not open");
        uint256 count = (hw >> HOT_SH_COUNT) & 0xFF;
        require(round == cur && count < (hw >> HOT_SH_N) & 0xFF, "round closed");
        uint256 w = _client[msg.sender];
        require(w & F_REG != 0, "not registered");
        require(w & F_EXCL == 0, "excluded");
        uint256 bit = 1 << (HOT_SH_SUBMITTED + ((w >> SH_INDEX) & 0xFF));
        require(hw & bit == 0, "already submitted");
        require(q.length == _dataLen(cur), "bad length");

        bool bad = _accumulate(q, SUMS_BASE + (cur % RING) * LANE_WORDS, count == 0);
        require(!bad, "value above b");

        emit Submitted(round, msg.sender, keccak256(q));
        hw = (hw | bit) + (1 << HOT_SH_COUNT);
        assembly ("memory-safe") {
            sstore(_hot.slot, hw)
        }
        if (count + 1 == (hw >> HOT_SH_N) & 0xFF) {
            Hot memory h = _hot;
            _complete(h);
            _hot = h;
        }
    }

    /// Adds (or, for the first submission of a round, writes) q into the slot at `base`.
    /// Returns true when some plain-mode value exceeds b.
    function _accumulate(bytes calldata q, uint256 base, bool first) private returns (bool) {
        if (LANE_BITS == 8) return _acc8(q, base, first, RANGE_K);
        if (MASKED) {
            _accMasked16(q, base, first);
            return false;
        }
        return _accPlain16(q, base, first, RANGE_K, (q.length + 15) >> 4);
    }

    /// Calldata word i of q with the bytes past q's end cleared (ABI padding is not trusted).
    function _word(bytes calldata q, uint256 i) private pure returns (uint256 x) {
        assembly ("memory-safe") {
            x := calldataload(add(q.offset, shl(5, i)))
            let end := shl(5, add(i, 1))
            if gt(end, q.length) {
                x := and(x, not(sub(shl(shl(3, sub(end, q.length)), 1), 1)))
            }
        }
    }

    /// 8-bit lanes: one calldata word is one lane word.
    function _acc8(bytes calldata q, uint256 base, bool first, uint256 k) private returns (bool bad) {
        assembly ("memory-safe") {
            let off := q.offset
            let len := q.length
            let n := shr(5, add(len, 31))
            let viol := 0
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                let x := calldataload(add(off, shl(5, i)))
                let end := shl(5, add(i, 1))
                // bytes past q's end are cleared (ABI padding is not trusted)
                if gt(end, len) { x := and(x, not(sub(shl(shl(3, sub(end, len)), 1), 1))) }
                // carry out of each byte of x + (255 - b): set iff that byte is above b
                let t := add(and(x, not(H8)), and(k, not(H8)))
                viol := or(viol, and(or(and(x, k), and(or(x, k), t)), H8))
                let slot := add(base, i)
                switch first
                case 1 { sstore(slot, x) }
                default { sstore(slot, add(sload(slot), x)) }
            }
            bad := gt(viol, 0)
        }
    }

    /// Masked mode: 16-bit lanes straight from calldata, each lane sum wraps mod 2^16.
    function _accMasked16(bytes calldata q, uint256 base, bool first) private {
        uint256 n = (q.length + 31) >> 5;
        for (uint256 i = 0; i < n; i++) {
            uint256 x = _word(q, i);
            assembly ("memory-safe") {
                let slot := add(base, i)
                switch first
                case 1 { sstore(slot, x) }
                default {
                    let a := sload(slot)
                    sstore(slot, xor(add(and(a, not(H16)), and(x, not(H16))), and(xor(a, x), H16)))
                }
            }
        }
    }

    /// Plain values (one byte each) widened to 16-bit lanes: each calldata word feeds two lane words.
    function _accPlain16(bytes calldata q, uint256 base, bool first, uint256 k, uint256 words)
        private
        returns (bool)
    {
        uint256 n = (q.length + 31) >> 5;
        uint256 viol;
        for (uint256 i = 0; i < n; i++) {
            uint256 x = _word(q, i);
            for (uint256 h = 0; h < 2; h++) {
                uint256 j = 2 * i + h;
                if (j >= words) break;
                assembly ("memory-safe") {
                    let y := and(shr(sub(128, shl(7, h)), x), 0xffffffffffffffffffffffffffffffff)
                    y := and(or(y, shl(64, y)), 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff)
                    y := and(or(y, shl(32, y)), 0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff)
                    y := and(or(y, shl(16, y)), 0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff)
                    y := and(or(y, shl(8, y)), 0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff)
                    viol := or(viol, and(add(y, k), C16))
                    let slot := add(base, j)
                    switch first
                    case 1 { sstore(slot, y) }
                    default { sstore(slot, add(sload(slot), y)) }
                }
            }
        }
        return viol != 0;
    }

    function _complete(Hot memory h) private {
        h.completedAt = uint40(block.number);
        uint64 r = h.round;
        emit RoundCompleted(r, h.count, _readSum(r));
        uint64 per = uint64(T) + V;
        if ((r + 1) % per == 0) {
            uint32 e = uint32(r / per);
            // one reused word (pre-set non-zero in the constructor): no fresh storage here
            _epochDone = EPOCH_DONE_SET | (uint256(e) + 1) << 64 | block.number;
        }
        if (!_isTrain(r)) _openNext(h);
    }

    function _openNext(Hot memory h) private {
        if (uint256(h.round) + 1 == TOTAL_ROUNDS) {
            h.ended = true;
            emit SessionEnded(TOTAL_ROUNDS);
        } else {
            h.round += 1;
            h.count = 0;
            h.submitted = 0;
            h.openedAt = uint40(block.number);
        }
    }

    function _readSum(uint64 r) private view returns (bytes memory out) {
        // sum bytes: the submission's bytes, doubled when plain values widen to 16-bit lanes
        uint256 len = _dataLen(r) << (LANE_BITS == 16 && !MASKED ? 1 : 0);
        uint256 words = (len + 31) >> 5;
        uint256 base = SUMS_BASE + (uint256(r) % RING) * LANE_WORDS;
        out = new bytes(words * 32);
        assembly ("memory-safe") {
            for { let i := 0 } lt(i, words) { i := add(i, 1) } {
                mstore(add(add(out, 32), shl(5, i)), sload(add(base, i)))
            }
            mstore(out, len)
        }
    }

    /// When the open round has not completed within roundTimeoutBlocks, excludes the participants
    /// that did not submit to it and completes it with the submissions it has.
    function expireRound() external {
        Hot memory h = _hot;
        require(h.started && !h.ended, "not training");
        require(h.count < h.n, "round complete");
        require(block.number > uint256(h.openedAt) + TIMEOUT_BLOCKS, "round not timed out");
        require(h.count > 0, "no submissions");
        uint256 np = _participants.length;
        address[] memory keep = new address[](h.count);
        uint256 kept;
        bool activeOut;
        for (uint256 i = 0; i < np; i++) {
            address a = _participants[i];
            uint256 w = _client[a];
            if (h.submitted & (uint64(1) << uint8(w >> SH_INDEX)) != 0) {
                keep[kept++] = a;
            } else {
                // it submitted every round before this one: freeze that count
                _client[a] = w | F_EXCL | (uint256(h.round) << SH_ACC);
                if (a == _active) activeOut = true;
                emit Excluded(a, 3);
            }
        }
        delete _participants;
        for (uint256 i = 0; i < kept; i++) _participants.push(keep[i]);
        h.n = uint8(kept);
        if (activeOut) _reelect(h.round, 2);
        if (MASKED) {
            // the masks of the missing clients do not cancel, so this attempt's sum is garbage:
            // void it and re-open the round for the clients that submitted (they re-mask for the
            // new set, which is strictly smaller, so the masks are fresh)
            emit RoundReopened(h.round, h.submitted, uint8(kept));
            h.count = 0;
            h.submitted = 0;
            h.openedAt = uint40(block.number);
        } else {
            _complete(h);
        }
        _hot = h;
    }

    // ------------------------------------------------------------------ active client

    /// The active client posts the gradient of the loss w.r.t. the aggregated embedding
    /// (coords IEEE-754 binary32, big-endian: the window's batches in order, each B*P row-major)
    /// and the fusion head's parameters (opaque bytes).
    function postGradient(uint64 round, bytes calldata gradient, bytes calldata fusionParams) external {
        require(msg.sender == _active, "not active");
        Hot memory h = _hot;
        require(h.started && !h.ended, "not training");
        require(round <= h.round, "round not open");
        require(round == h.round, "round closed");
        require(_isTrain(round), "eval round");
        require(h.count == h.n, "round not complete");
        require(gradient.length == _coords(round) * 4, "bad gradient length");
        require(fusionParams.length <= MAX_FUSION_PARAMS, "fusion params too long");
        _fusionHash = keccak256(fusionParams);
        _fusionRound = round;
        emit GradientPosted(round, msg.sender, gradient, fusionParams);
        _openNext(h);
        _hot = h;
    }

    /// A label holder posts dLoss/dlogits for its rows of a complete TRAIN round whose gradient is
    /// not posted yet, once per round (see the header for the encoding).
    function postLabelGradient(uint64 round, bytes calldata grad) external {
        uint256 w = _client[msg.sender];
        require(w & F_LABEL != 0, "not a label holder");
        require(w & F_EXCL == 0, "excluded");
        Hot memory h = _hot;
        require(h.started && !h.ended, "not training");
        require(round <= h.round, "round not open");
        require(round == h.round, "round closed");
        require(_isTrain(round), "eval round");
        require(h.count == h.n, "round not complete");
        uint256 unit = _rows(round) * 4;
        require(grad.length != 0 && grad.length % unit == 0 && grad.length <= unit * 256, "bad label gradient length");
        uint256 lp = _labelPosts;
        uint256 posted = lp >> 64 == round ? lp & 0xFFFFFFFFFFFFFFFF : 0;
        uint256 bit = uint256(1) << ((w >> SH_INDEX) & 0xFF);
        require(posted & bit == 0, "label gradient already posted");
        _labelPosts = (uint256(round) << 64) | posted | bit;
        emit LabelGradientPosted(round, msg.sender, grad);
    }

    /// The active client posts the epoch's test metrics (micro units), once per epoch.
    function postMetrics(uint32 epoch, uint32 aurocMicro, uint32 accuracyMicro, uint64 lossMicro) external {
        require(msg.sender == _active, "not active");
        require(epoch < EPOCHS, "no such epoch");
        require(_epochComplete(epoch, _hot), "epoch not complete");
        uint256 st = _epoch[epoch];
        require(st & 1 == 0, "metrics already posted");
        require(aurocMicro <= 1e6 && accuracyMicro <= 1e6, "metric above 1e6");
        _epoch[epoch] = st | 1;
        emit MetricsPosted(epoch, msg.sender, aurocMicro, accuracyMicro, lossMicro);
        _settle();
    }

    /// The active client triggers the epoch's payout; the contract decides who gets what:
    /// every client gets (accepted - rewarded) * rewardPerSubmission.
    function payRewards(uint32 epoch) external {
        require(msg.sender == _active, "not active");
        require(epoch < EPOCHS, "no such epoch");
        require(_epochComplete(epoch, _hot), "epoch not complete");
        uint256 st = _epoch[epoch];
        require(st & 2 == 0, "rewards already paid");
        _epoch[epoch] = st | 2;
        uint256 n = _clients.length;
        Hot memory h = _hot;
        bool paid;
        for (uint256 i = 0; i < n; i++) {
            address a = _clients[i];
            uint256 w = _client[a];
            uint256 acc = _accepted(w, h);
            uint256 rew = (w >> SH_REW) & M32;
            if (acc == rew) continue;
            paid = true;
            _client[a] = (w & ~(M32 << SH_REW)) | (acc << SH_REW);
            uint256 amount = (acc - rew) * RATE;
            emit RewardsPaid(epoch, a, amount, uint32(acc - rew));
            require(token.transfer(a, amount), "transfer failed");
        }
        // nobody was due (all already paid by an earlier call): still log that the epoch is settled
        if (!paid) emit RewardsPaid(epoch, address(0), 0, 0);
        _settle();
    }

    function _settle() private {
        uint32 e = _unsettled;
        while (e < EPOCHS && _epoch[e] & 3 == 3) e++;
        _unsettled = e;
    }

    // ------------------------------------------------------------------ helpers

    /// Accepted submissions of a client. A participant has submitted every round before the
    /// open one (a round completes only when every participant submitted), plus the open round
    /// if its bit is set; an excluded client's count was frozen when it was excluded.
    function _accepted(uint256 w, Hot memory h) private pure returns (uint256) {
        if (w & F_EXCL != 0) return (w >> SH_ACC) & M32;
        if (w & F_REG == 0 || !h.started) return 0;
        return uint256(h.round) + ((h.submitted >> uint8(w >> SH_INDEX)) & 1);
    }

    /// Layout of round r (see the header): TRAIN window `index` or EVAL round `index`, its rows.
    function _layout(uint64 r) private view returns (bool train, uint32 epoch, uint32 index, uint256 rows) {
        uint64 per = uint64(T) + V;
        uint64 pos = r % per;
        epoch = uint32(r / per);
        train = pos < T;
        if (train) {
            index = uint32(pos);
            uint256 left = R_BATCHES - uint256(pos) * K_WINDOW;
            rows = (left < K_WINDOW ? left : K_WINDOW) * B;
        } else {
            index = uint32(pos - T);
            uint256 left = NE - uint256(index) * ER;
            rows = left < ER ? left : ER;
        }
    }

    /// Bytes of a submission to round r (the submit path's cheap form of _layout).
    function _dataLen(uint256 r) private view returns (uint256 len) {
        uint256 t = T;
        uint256 per = t + V;
        uint256 k = K_WINDOW;
        uint256 rb = R_BATCHES;
        uint256 ne = NE;
        uint256 er = ER;
        uint256 rowLen = uint256(P) << (MASKED ? 1 : 0);
        uint256 b = B;
        assembly ("memory-safe") {
            let pos := mod(r, per)
            switch lt(pos, t)
            case 1 {
                let left := sub(rb, mul(pos, k))
                if gt(left, k) { left := k }
                len := mul(mul(left, b), rowLen)
            }
            default {
                let left := sub(ne, mul(sub(pos, t), er))
                if gt(left, er) { left := er }
                len := mul(left, rowLen)
            }
        }
    }

    function _rows(uint64 r) private view returns (uint256 rows) {
        (,,, rows) = _layout(r);
    }

    function _coords(uint64 r) private view returns (uint256) {
        return _rows(r) * P;
    }

    function _isTrain(uint64 r) private view returns (bool) {
        return r % (uint64(T) + V) < T;
    }

    function _isComplete(uint64 r, Hot memory h) private pure returns (bool) {
        if (!h.started) return false;
        if (r < h.round) return true;
        return r == h.round && h.count == h.n;
    }

    function _epochComplete(uint32 e, Hot memory h) private view returns (bool) {
        uint64 last = uint64(e + 1) * (uint64(T) + V) - 1;
        return _isComplete(last, h);
    }

    // ------------------------------------------------------------------ views

    function params() external view returns (Params memory p) {
        p.clients = M;
        p.batch = B;
        p.dim = P;
        p.levels = LEVELS;
        p.betaMicro = BETA_MICRO;
        p.masked = MASKED;
        p.batchesPerEpoch = R_BATCHES;
        p.window = K_WINDOW;
        p.evalRows = NE;
        p.evalRowsPerRound = ER;
        p.trainRows = TRAIN_ROWS;
        p.testRows = TEST_ROWS;
        p.epochs = EPOCHS;
        p.rewardPerSubmission = RATE;
        p.rewardPool = POOL;
        p.commitBlocks = COMMIT_BLOCKS;
        p.revealBlocks = REVEAL_BLOCKS;
        p.activeBlocks = ACTIVE_BLOCKS;
        p.roundTimeoutBlocks = TIMEOUT_BLOCKS;
        p.trainRoundsPerEpoch = T;
        p.evalRoundsPerEpoch = V;
        p.laneBits = LANE_BITS;
        p.token = address(token);
        p.totalRounds = TOTAL_ROUNDS;
        p.maxCoords = uint32(MAX_COORDS);
    }

    function phase() public view returns (Phase) {
        Hot memory h = _hot;
        if (h.ended) return Phase.Ended;
        if (h.started) return Phase.Training;
        if (_clients.length < M) return Phase.Registration;
        if (_committed < M && block.number <= uint256(_closeBlock) + COMMIT_BLOCKS) return Phase.Commit;
        return Phase.Reveal;
    }

    /// The open round (after the session ended: the total number of rounds).
    function currentRound() external view returns (uint64) {
        Hot memory h = _hot;
        return h.ended && h.started ? TOTAL_ROUNDS : h.round;
    }

    /// State of the open round.
    function roundState()
        external
        view
        returns (uint64 round, uint8 submitted, uint8 participantCount, bool complete, uint64 openedAt, uint64 completedAt)
    {
        Hot memory h = _hot;
        return (h.round, h.count, h.n, h.started && h.count == h.n, h.openedAt, h.completedAt);
    }

    /// Kind of round r: TRAIN (window `index`) or EVAL (eval round `index`), and its epoch.
    function roundKind(uint64 r) external view returns (bool train, uint32 epoch, uint32 index) {
        (train, epoch, index,) = _layout(r);
    }

    /// Layout of round r < totalRounds: kind, epoch, index (window or eval round), rows and
    /// coordinates (rows * P) it carries.
    function roundLayout(uint64 r)
        external
        view
        returns (bool train, uint32 epoch, uint32 index, uint32 rows, uint32 coords)
    {
        require(r < TOTAL_ROUNDS, "no such round");
        uint256 n;
        (train, epoch, index, n) = _layout(r);
        rows = uint32(n);
        coords = uint32(n * P);
    }

    /// The flat sum of a complete round still held by the ring (see header for the format).
    function roundSum(uint64 r) external view returns (bytes memory) {
        Hot memory h = _hot;
        require(_isComplete(r, h), "round not complete");
        require(uint256(r) + RING > h.round, "sum overwritten: read RoundCompleted");
        return _readSum(r);
    }

    function clientInfo(address a)
        external
        view
        returns (
            bool registered,
            bool excluded,
            bool committed,
            bool revealed,
            uint8 index,
            uint64 lastRoundPlus1,
            uint32 accepted,
            uint32 rewarded
        )
    {
        uint256 w = _client[a];
        registered = w & F_REG != 0;
        excluded = w & F_EXCL != 0;
        committed = w & F_COMMIT != 0;
        revealed = w & F_REVEAL != 0;
        index = uint8(w >> SH_INDEX);
        accepted = uint32(_accepted(w, _hot));
        // submissions are contiguous from round 0, so the last one is round accepted - 1
        lastRoundPlus1 = accepted;
        rewarded = uint32(w >> SH_REW);
    }

    /// Registered clients in index order.
    function clients() external view returns (address[] memory) {
        return _clients;
    }

    /// Clients taking part after the election (and after expireRound exclusions), in index order.
    function participants() external view returns (address[] memory) {
        return _participants;
    }

    function pubkeyOf(address a) external view returns (bytes memory) {
        return _pubkey[a];
    }

    function commitmentOf(address a) external view returns (bytes32) {
        return _commitment[a];
    }

    /// Session seed S (drives the minibatch schedule; zero before the election).
    function seed() external view returns (bytes32) {
        return _seed;
    }

    /// Latest seed of the election chain (S, then one keccak step per re-election).
    function electionSeed() external view returns (bytes32) {
        return _electionSeed;
    }

    function active() external view returns (address) {
        return _active;
    }

    /// Block the current active client was elected at.
    function activeSince() external view returns (uint64) {
        return _activeSince;
    }

    /// Registration close block and the (inclusive) commit and reveal deadlines; zeros while open.
    function deadlines() external view returns (uint64 closedAt, uint64 commitDeadline, uint64 revealDeadline) {
        if (_clients.length < M) return (0, 0, 0);
        closedAt = _closeBlock;
        commitDeadline = closedAt + COMMIT_BLOCKS;
        revealDeadline = commitDeadline + REVEAL_BLOCKS;
    }

    /// keccak256 of the last posted fusion parameters (zero when none was posted yet).
    function lastFusionParamsHash() external view returns (bytes32) {
        return _fusionHash;
    }

    /// Round of the last gradient/fusion-parameter post (meaningful when the hash is non-zero).
    function lastFusionRound() external view returns (uint64) {
        return _fusionRound;
    }

    function epochState(uint32 e)
        external
        view
        returns (bool complete, bool metricsPosted, bool rewardsPaid)
    {
        uint256 st = _epoch[e];
        complete = e < EPOCHS && _epochComplete(e, _hot);
        metricsPosted = st & 1 != 0;
        rewardsPaid = st & 2 != 0;
    }

    /// The latest epoch whose rounds all completed, and the block its last round completed in.
    function lastEpochCompleted() external view returns (bool any, uint32 epoch, uint64 atBlock) {
        uint256 d = _epochDone;
        uint256 ep1 = (d >> 64) & M32;
        any = ep1 != 0;
        epoch = any ? uint32(ep1 - 1) : 0;
        atBlock = uint64(d);
    }

    /// Label holders (bit i = client index i), fixed at registration.
    function labelHolders() external view returns (uint64) {
        return _labelHolders;
    }

    /// The latest round a label gradient was posted for, and which holders (bit = index) posted.
    function labelPosts() external view returns (uint64 round, uint64 posted) {
        uint256 lp = _labelPosts;
        round = uint64(lp >> 64);
        posted = uint64(lp);
    }

    /// Oldest epoch whose metrics or rewards are still missing (epochs when all are settled).
    function unsettledEpoch() external view returns (uint32) {
        return _unsettled;
    }
}
