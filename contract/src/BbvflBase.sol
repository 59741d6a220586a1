// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {BbvflRewardToken} from "./BbvflRewardToken.sol";

/// @title bbvfl session logic shared by both aggregation modes
/// @notice Configuration, registration, commit-reveal election, re-election, gradient and
/// label-gradient posts, metrics, rewards and the views. The two deployable contracts add the
/// aggregation: BbvflAggregator (packed lanes in storage, one round open at a time) and
/// BbvflHashAggregator (hashes in storage, sums computed by aggregate() from the payloads,
/// pipelined rounds). Both take the same Config and expose the same functions for everything
/// shared; the protocol is described in the header of BbvflAggregator.sol, the hashed mode's
/// differences in that of BbvflHashAggregator.sol.
abstract contract BbvflBase {
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
        uint32 curvEvery; // L: curvature rounds after every L-th epoch from the 2L-th (0: none; lane mode, B = 1)
        uint32 curvRows; // S: rows of an epoch's curvature rounds (the first S of its permutation)
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
        uint32 curvEvery;
        uint32 curvRows;
        uint32 curvRoundsPerEpoch; // C = ceil(S / (K*B)), in the epochs that have curvature rounds
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
    uint256 internal constant HOT_SH_COUNT = 64;
    uint256 internal constant HOT_SH_N = 72;
    uint256 internal constant HOT_STARTED = 1 << 80;
    uint256 internal constant HOT_ENDED = 1 << 88;
    uint256 internal constant HOT_SH_SUBMITTED = 176;

    uint256 public constant MAX_FUSION_PARAMS = 262144;

    // per-client word layout
    uint256 internal constant F_REG = 1;
    uint256 internal constant F_EXCL = 2;
    uint256 internal constant F_COMMIT = 4;
    uint256 internal constant F_REVEAL = 8;
    uint256 internal constant F_LABEL = 16;
    uint256 internal constant F_MEMBER = 1 << 80; // a member of a closed session, until it registers
    uint256 internal constant SH_INDEX = 8;
    uint256 internal constant SH_ACC = 16; // accepted submissions, frozen when excluded, 32 bits
    uint256 internal constant SH_REW = 48; // rewarded submissions, 32 bits
    uint256 internal constant M32 = 0xFFFFFFFF;

    // SWAR constants
    uint256 internal constant H8 = 0x8080808080808080808080808080808080808080808080808080808080808080;
    uint256 internal constant L8 = 0x0101010101010101010101010101010101010101010101010101010101010101;
    uint256 internal constant H16 = 0x8000800080008000800080008000800080008000800080008000800080008000;
    uint256 internal constant L16 = 0x0001000100010001000100010001000100010001000100010001000100010001;
    uint256 internal constant C16 = 0x0100010001000100010001000100010001000100010001000100010001000100;

    uint8 internal immutable M;
    uint32 internal immutable B;
    uint32 internal immutable P;
    uint8 internal immutable LEVELS;
    uint32 internal immutable BETA_MICRO;
    bool internal immutable MASKED;
    uint32 internal immutable R_BATCHES;
    uint32 internal immutable K_WINDOW;
    uint32 internal immutable NE;
    uint32 internal immutable ER;
    uint32 internal immutable TRAIN_ROWS;
    uint32 internal immutable TEST_ROWS;
    uint8 internal immutable STALENESS;
    uint32 internal immutable T;
    uint32 internal immutable V;
    uint32 internal immutable EPOCHS;
    uint256 internal immutable RATE;
    uint256 internal immutable POOL;
    uint64 internal immutable COMMIT_BLOCKS;
    uint64 internal immutable REVEAL_BLOCKS;
    uint64 internal immutable ACTIVE_BLOCKS;
    uint64 internal immutable TIMEOUT_BLOCKS;
    uint8 internal immutable LANE_BITS;
    uint64 internal immutable TOTAL_ROUNDS;
    uint256 internal immutable MAX_COORDS;
    uint256 internal immutable LANE_WORDS; // words of one ring slot (largest round)
    uint256 internal immutable RANGE_K; // (255 - b) in every lane, for the SWAR range check
    uint32 internal immutable CURV_EVERY; // L (0: no curvature rounds)
    uint32 internal immutable CURV_ROWS; // S
    uint32 internal immutable C_CURV; // curvature rounds of a curvature epoch
    BbvflRewardToken public immutable token;
    bool internal immutable OPEN; // no member list: anyone may register

    Hot internal _hot;
    mapping(address => uint256) internal _client;
    mapping(address => bytes) internal _pubkey;
    mapping(address => bytes32) internal _commitment;
    mapping(address => bytes32) internal _secret;
    address[] internal _clients;
    address[] internal _participants;
    uint8 internal _committed;
    uint8 internal _revealed;
    uint64 internal _closeBlock;
    bytes32 internal _seed;
    bytes32 internal _electionSeed;
    address internal _active;
    uint64 internal _activeSince;
    bytes32 internal _fusionHash;
    uint64 internal _fusionRound;
    uint32 internal _unsettled; // lowest epoch whose metrics or rewards are still missing
    uint64 internal _labelHolders; // bit i: client index i registered as a label holder
    // label-gradient posts of the latest round posted to: round << 64 | bitmap of the holders' indices
    uint256 internal _labelPosts;
    // epoch => bit 0 metrics posted, bit 1 rewards paid
    mapping(uint32 => uint256) internal _epoch;
    // latest completed epoch: EPOCH_DONE_SET | (epoch + 1) << 64 | completion block
    uint256 internal _epochDone;
    uint256 internal constant EPOCH_DONE_SET = 1 << 255;

    /// Emitted once, by the constructor: the addresses that may register (the session is closed
    /// to them), or none: the session is open to anyone (deployed so on purpose).
    event Members(address[] members);
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
    /// The last round is done. Optimistic mode: a dispute of a claim of the last epoch re-opens
    /// an ended session (the roll-back), and SessionEnded is emitted again when it ends again: the
    /// last one counts. Pool tokens beyond the payouts (the pool is sized for rate x M x rounds;
    /// excluded clients are not paid for the rounds after their exclusion) stay in this contract:
    /// it has no owner, so there is nobody to sweep them to.
    event SessionEnded(uint64 rounds);
    /// Masked mode: expireRound voided the open round's submissions and re-opened it for the
    /// participant set `participants` (bit i = client index i), n = its size.
    event RoundReopened(uint64 indexed round, uint64 participants, uint8 n);

    // ------------------------------------------------------------------ errors
    // Every refusal is a custom error (selector + ABI-encoded arguments): clients branch on the
    // selector, people read the name and the arguments. Both deployable contracts revert with
    // these; the C client gets their selectors from abi/ at build time.

    // Config refusals (constructor): one error per rule, its arguments the offending fields and
    // the bound they broke, so a deployer sees what to change without reading the source.

    /// @notice M (Config.clients) must be 1..max.
    /// @param given the Config's clients
    /// @param max the largest M (64: a participant set is one 64-bit mask)
    error ClientsOutOfRange(uint256 given, uint256 max);
    /// @notice B (Config.batch) and P (Config.dim) must both be >= 1.
    /// @param batch the Config's batch
    /// @param dim the Config's dim
    error EmptyBatchOrDim(uint256 batch, uint256 dim);
    /// @notice b (Config.levels) must be >= 1.
    error ZeroLevels();
    /// @notice beta (Config.betaMicro / 1e6) must be <= 0.5.
    /// @param givenMicro the Config's betaMicro
    /// @param maxMicro 500000
    error BetaTooLarge(uint256 givenMicro, uint256 maxMicro);
    /// @notice R (Config.batchesPerEpoch) must be >= 1.
    error ZeroBatchesPerEpoch();
    /// @notice K (Config.window) must be 1..R.
    /// @param window the Config's window
    /// @param batchesPerEpoch R, the largest window
    error WindowOutOfRange(uint256 window, uint256 batchesPerEpoch);
    /// @notice Eval rounds (Config.evalRows > 0) need Config.evalRowsPerRound >= 1.
    /// @param evalRows the Config's evalRows
    error ZeroEvalRowsPerRound(uint256 evalRows);
    /// @notice Config.trainRows must cover one epoch's minibatches (R*B rows).
    /// @param trainRows the Config's trainRows
    /// @param needed R*B
    error TrainRowsBelowEpoch(uint256 trainRows, uint256 needed);
    /// @notice Config.testRows must cover the rows evaluated per epoch (Config.evalRows).
    /// @param testRows the Config's testRows
    /// @param evalRows the Config's evalRows
    error TestRowsBelowEvalRows(uint256 testRows, uint256 evalRows);
    /// @notice Config.hashed names the other aggregation mode: deploy BbvflAggregator for lane
    /// mode (hashed = false), BbvflHashAggregator (or a contract built on it) for hashed mode.
    /// @param configHashed the Config's hashed
    /// @param contractHashed whether this contract aggregates in hashed mode
    error WrongModeContract(bool configHashed, bool contractHashed);
    /// @notice Config.staleness above what the mode allows (hashed mode: < 8, the ring's slots;
    /// lane mode: 0, one round open at a time).
    /// @param given the Config's staleness
    /// @param max the largest staleness of this contract's mode
    error StalenessTooLarge(uint256 given, uint256 max);
    /// @notice Config.epochs must be >= 1.
    error ZeroEpochs();
    /// @notice Every deadline (Config.commitBlocks, revealBlocks, activeBlocks,
    /// roundTimeoutBlocks) must be 1 .. 2^32 - 1 blocks.
    /// @param commitBlocks the Config's commitBlocks
    /// @param revealBlocks the Config's revealBlocks
    /// @param activeBlocks the Config's activeBlocks
    /// @param roundTimeoutBlocks the Config's roundTimeoutBlocks
    error DeadlineOutOfRange(uint256 commitBlocks, uint256 revealBlocks, uint256 activeBlocks, uint256 roundTimeoutBlocks);
    /// @notice A round would carry more coordinates than a round may (max(K*B, ER) * P).
    /// @param coords coordinates of the largest round
    /// @param max 2^20
    error RoundTooLarge(uint256 coords, uint256 max);
    /// @notice Curvature rounds (Config.curvEvery > 0) need lane mode and B = 1.
    /// @param hashedMode whether this contract aggregates in hashed mode
    /// @param batch the Config's batch
    error CurvatureUnsupported(bool hashedMode, uint256 batch);
    /// @notice Config.curvRows must be 1..R when curvature rounds are on.
    /// @param curvRows the Config's curvRows
    /// @param batchesPerEpoch R, the largest curvRows
    error CurvRowsOutOfRange(uint256 curvRows, uint256 batchesPerEpoch);
    /// @notice The session would have more rounds than a round number holds.
    /// @param total rounds of the whole session
    /// @param max 2^32 - 1
    error TooManyRounds(uint256 total, uint256 max);
    /// @notice Plain values: the largest sum M*b must fit a 16-bit lane.
    /// @param sumMax M*b
    /// @param max 65535
    error SumTooLargeForLanes(uint256 sumMax, uint256 max);
    /// @notice Config.rewardPool must pay Config.rewardPerSubmission for every submission
    /// (pool >= rate * M * total rounds).
    /// @param pool the Config's rewardPool
    /// @param rate the Config's rewardPerSubmission
    /// @param clients M
    /// @param rounds total rounds of the session
    error RewardPoolTooSmall(uint256 pool, uint256 rate, uint256 clients, uint256 rounds);
    /// @notice This contract aggregates plain values only; the Config asks for masked ones.
    error MaskedUnsupported();

    /// @notice All M clients have registered already.
    error RegistrationClosed();
    /// @notice The session is closed to its members (given at deploy) and the caller is not one.
    error NotMember();
    /// @notice A closed session's member list must name exactly M distinct addresses.
    /// @param given addresses given
    /// @param clients the session's M
    error MembersMismatch(uint256 given, uint256 clients);
    /// @notice The member list names an address twice (or the zero address).
    /// @param member the address
    error DuplicateMember(address member);
    /// @notice A public key must be 64 bytes (uncompressed secp256k1 x || y).
    /// @param expected 64
    /// @param got the length sent
    error BadPubkeyLength(uint256 expected, uint256 got);
    /// @notice The public key does not hash to the sender's address.
    error PubkeyNotSender();
    /// @notice The sender is registered already.
    error AlreadyRegistered();
    /// @notice Registration is still open: commits, reveals and the election wait for M clients.
    error RegistrationOpen();
    /// @notice The commit deadline (registration close + commitBlocks) has passed.
    error CommitDeadlinePassed();
    /// @notice The sender is not a registered client.
    error NotRegistered();
    /// @notice The sender has committed already.
    error AlreadyCommitted();
    /// @notice A commitment must not be zero.
    error EmptyCommitment();
    /// @notice The election has run (or the session ended without one).
    error ElectionOver();
    /// @notice Reveals open when every client committed or the commit deadline passed.
    error RevealNotOpen();
    /// @notice The reveal deadline (commit deadline + revealBlocks) has passed.
    error RevealDeadlinePassed();
    /// @notice The sender did not commit.
    error NotCommitted();
    /// @notice The sender has revealed already.
    error AlreadyRevealed();
    /// @notice keccak256(secret, sender, this contract, chain id) is not the sender's commitment.
    error SecretMismatch();
    /// @notice finalizeElection waits for the reveal deadline to pass.
    error RevealDeadlineNotPassed();
    /// @notice No election has run yet.
    error NoElectionYet();
    /// @notice reelect: the active client is within its deadline (activeBlocks).
    error ActiveNotOverdue();
    /// @notice Only the active client may call this (it may have been re-elected away).
    error NotActive();
    /// @notice Training has not started or the session is over.
    error NotTraining();
    /// @notice The session has ended.
    error SessionOver();
    /// @notice The round is not open yet (after the open round, beyond the ring or the
    /// staleness bound).
    /// @param round the round asked for
    /// @param open the open round (hashed mode: the oldest round not done)
    error RoundNotOpen(uint64 round, uint64 open);
    /// @notice The round is closed: before the open round, or complete (lane mode).
    /// @param round the round asked for
    /// @param open the open round (hashed mode: the oldest round not done)
    error RoundClosed(uint64 round, uint64 open);
    /// @notice An evaluation round takes no gradient.
    /// @param round the round asked for
    error EvalRound(uint64 round);
    /// @notice The round's sum does not exist yet (a submission is missing; hashed: not aggregated).
    /// @param round the round asked for
    error RoundNotComplete(uint64 round);
    /// @notice The gradient must be coords * 4 bytes (binary32 per coordinate).
    /// @param expected bytes the round needs
    /// @param got bytes sent
    error BadGradientLength(uint256 expected, uint256 got);
    /// @notice The fusion parameters are longer than MAX_FUSION_PARAMS bytes.
    /// @param max MAX_FUSION_PARAMS
    /// @param got bytes sent
    error FusionParamsTooLong(uint256 max, uint256 got);
    /// @notice The sender did not register as a label holder.
    error NotLabelHolder();
    /// @notice The sender was excluded from the session.
    error ClientExcluded();
    /// @notice A label gradient must be a non-zero multiple of rows * 4 bytes, at most 256 of them.
    /// @param unit rows * 4 of the round
    /// @param got bytes sent
    error BadLabelGradientLength(uint256 unit, uint256 got);
    /// @notice The sender posted its label gradient for this round already.
    /// @param round the round
    error LabelGradientAlreadyPosted(uint64 round);
    /// @notice The epoch is beyond the session's epochs.
    /// @param epoch the epoch asked for
    error NoSuchEpoch(uint32 epoch);
    /// @notice Some round of the epoch is not complete yet.
    /// @param epoch the epoch asked for
    error EpochNotComplete(uint32 epoch);
    /// @notice The epoch's metrics were posted already.
    /// @param epoch the epoch
    error MetricsAlreadyPosted(uint32 epoch);
    /// @notice AUROC and accuracy are micro units: at most 1e6.
    error MetricAbove1e6();
    /// @notice The epoch's rewards were paid already.
    /// @param epoch the epoch
    error RewardsAlreadyPaid(uint32 epoch);
    /// @notice The reward token refused a transfer.
    error TransferFailed();
    /// @notice The round is beyond the session's rounds.
    /// @param round the round asked for
    error NoSuchRound(uint64 round);
    /// @notice The sender submitted to this round already.
    /// @param round the round
    error AlreadySubmitted(uint64 round);
    /// @notice A submission must carry exactly the round's bytes (coords, masked: 2 * coords).
    /// @param expected bytes the round needs
    /// @param got bytes sent
    error BadLength(uint256 expected, uint256 got);
    /// @notice Plain mode: some value of the submission is above b.
    /// @param levels b
    error ValueAboveLevels(uint256 levels);
    /// @notice expireRound: the open round is complete.
    error RoundAlreadyComplete();
    /// @notice expireRound: the open round's timeout has not passed.
    /// @param afterBlock the round may be expired in blocks after this one
    error RoundNotTimedOut(uint256 afterBlock);
    /// @notice expireRound: nobody submitted to the open round (nothing to complete it with).
    error NoSubmissions();
    /// @notice Lane mode: the round's ring slot holds a later round; read RoundCompleted instead.
    /// @param round the round asked for
    error SumOverwritten(uint64 round);
    /// @notice Hashed mode: no sum is stored; read RoundCompleted instead.
    error NoStoredSum();
    /// @notice Hashed mode: the round's sum was formed already.
    /// @param round the round
    error AlreadyAggregated(uint64 round);
    /// @notice Hashed mode: aggregate needs one payload per participant.
    /// @param expected participants
    /// @param got payloads sent
    error BadPayloadCount(uint256 expected, uint256 got);
    /// @notice Hashed mode: a payload does not hash to the participant's stored submission.
    /// @param index position of the payload in the list
    error PayloadHashMismatch(uint256 index);

    /// `members`: the M addresses that may register (each organisation's client), or none for a
    /// session open to anyone.
    constructor(Config memory c, bool hashedMode, address[] memory members) {
        require(c.clients >= 1 && c.clients <= 64, ClientsOutOfRange(c.clients, 64));
        require(c.batch >= 1 && c.dim >= 1, EmptyBatchOrDim(c.batch, c.dim));
        require(c.levels >= 1, ZeroLevels());
        require(c.betaMicro <= 500000, BetaTooLarge(c.betaMicro, 500000));
        require(c.batchesPerEpoch >= 1, ZeroBatchesPerEpoch());
        require(c.window >= 1 && c.window <= c.batchesPerEpoch, WindowOutOfRange(c.window, c.batchesPerEpoch));
        require(c.evalRows == 0 || c.evalRowsPerRound >= 1, ZeroEvalRowsPerRound(c.evalRows));
        require(
            c.trainRows >= uint256(c.batchesPerEpoch) * c.batch,
            TrainRowsBelowEpoch(c.trainRows, uint256(c.batchesPerEpoch) * c.batch)
        );
        require(c.testRows >= c.evalRows, TestRowsBelowEvalRows(c.testRows, c.evalRows));
        require(c.hashed == hashedMode, WrongModeContract(c.hashed, hashedMode));
        uint256 maxStale = hashedMode ? 7 : 0;
        require(c.staleness <= maxStale, StalenessTooLarge(c.staleness, maxStale));
        require(c.epochs >= 1, ZeroEpochs());
        require(
            c.commitBlocks >= 1 && c.revealBlocks >= 1 && c.activeBlocks >= 1 && c.roundTimeoutBlocks >= 1
                && (c.commitBlocks | c.revealBlocks | c.activeBlocks | c.roundTimeoutBlocks) < 1 << 32,
            DeadlineOutOfRange(c.commitBlocks, c.revealBlocks, c.activeBlocks, c.roundTimeoutBlocks)
        );
        uint256 t = (uint256(c.batchesPerEpoch) + c.window - 1) / c.window;
        uint256 v = c.evalRows == 0 ? 0 : (uint256(c.evalRows) + c.evalRowsPerRound - 1) / c.evalRowsPerRound;
        uint256 er = c.evalRowsPerRound < c.evalRows ? c.evalRowsPerRound : c.evalRows;
        uint256 rows = uint256(c.window) * c.batch;
        if (er > rows) rows = er;
        uint256 coords = rows * c.dim;
        require(coords <= 1 << 20, RoundTooLarge(coords, 1 << 20));
        uint256 cc;
        if (c.curvEvery != 0) {
            require(!hashedMode && c.batch == 1, CurvatureUnsupported(hashedMode, c.batch));
            require(
                c.curvRows >= 1 && c.curvRows <= c.batchesPerEpoch, CurvRowsOutOfRange(c.curvRows, c.batchesPerEpoch)
            );
            cc = (uint256(c.curvRows) + c.window - 1) / c.window;
        }
        uint256 total = uint256(c.epochs) * (t + v) + _curvEpochs(c.epochs, c.curvEvery) * cc;
        require(total <= M32, TooManyRounds(total, M32));
        uint256 sumMax = uint256(c.clients) * c.levels;
        uint8 bits;
        if (c.masked) bits = 16;
        else if (sumMax < 256) bits = 8;
        else if (sumMax < 65536) bits = 16;
        else revert SumTooLargeForLanes(sumMax, 65535);
        require(
            c.rewardPool / total / c.clients >= c.rewardPerSubmission,
            RewardPoolTooSmall(c.rewardPool, c.rewardPerSubmission, c.clients, total)
        );

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
        STALENESS = c.staleness;
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
        CURV_EVERY = c.curvEvery;
        CURV_ROWS = c.curvRows;
        C_CURV = uint32(cc);
        token = new BbvflRewardToken(c.rewardPool);
        _epochDone = EPOCH_DONE_SET;
        require(members.length == 0 || members.length == c.clients, MembersMismatch(members.length, c.clients));
        for (uint256 i = 0; i < members.length; i++) {
            address a = members[i];
            require(a != address(0) && _client[a] == 0, DuplicateMember(a));
            _client[a] = F_MEMBER;
        }
        OPEN = members.length == 0;
        emit Members(members);
    }

    // ------------------------------------------------------------------ registration

    /// Registers the caller with its 64-byte uncompressed secp256k1 public key (x || y). A closed
    /// session (members given at deploy) takes its members only (NotMember).
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

    function _register(bytes calldata pubkey) internal returns (uint256 index) {
        if (!(_clients.length < M)) _revert(RegistrationClosed.selector);
        if (!(OPEN || _client[msg.sender] & F_MEMBER != 0)) _revert(NotMember.selector);
        if (!(pubkey.length == 64)) _revert(BadPubkeyLength.selector, 64, pubkey.length);
        if (!(address(uint160(uint256(keccak256(pubkey)))) == msg.sender)) _revert(PubkeyNotSender.selector);
        if (!(_client[msg.sender] & F_REG == 0)) _revert(AlreadyRegistered.selector);
        index = _clients.length;
        _client[msg.sender] = F_REG | (index << SH_INDEX);
        _clients.push(msg.sender);
        _pubkey[msg.sender] = pubkey;
        if (index + 1 == M) _closeBlock = uint64(block.number);
        emit Registered(msg.sender, uint8(index), pubkey);
    }

    // ------------------------------------------------------------------ election

    /// Commits to a secret: c = keccak256(abi.encodePacked(secret, msg.sender, address(this),
    /// block.chainid)). The contract address and chain id bind the commitment to this session: a
    /// commitment made for another aggregator or chain does not open here (SecretMismatch).
    function commit(bytes32 c) external {
        if (!(_clients.length == M)) _revert(RegistrationOpen.selector);
        if (!(block.number <= _closeBlock + COMMIT_BLOCKS)) _revert(CommitDeadlinePassed.selector);
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) _revert(NotRegistered.selector);
        if (!(w & F_COMMIT == 0)) _revert(AlreadyCommitted.selector);
        if (!(c != bytes32(0))) _revert(EmptyCommitment.selector);
        _client[msg.sender] = w | F_COMMIT;
        _commitment[msg.sender] = c;
        _committed += 1;
        emit Committed(msg.sender, c);
    }

    /// Reveals the committed secret. The election runs in the reveal that completes the set.
    function reveal(bytes32 secret) external {
        if (!(_clients.length == M)) _revert(RegistrationOpen.selector);
        if (!(!_hot.started && !_hot.ended)) _revert(ElectionOver.selector);
        uint256 commitDeadline = _closeBlock + COMMIT_BLOCKS;
        if (!(_committed == M || block.number > commitDeadline)) _revert(RevealNotOpen.selector);
        if (!(block.number <= commitDeadline + REVEAL_BLOCKS)) _revert(RevealDeadlinePassed.selector);
        uint256 w = _client[msg.sender];
        if (!(w & F_COMMIT != 0)) _revert(NotCommitted.selector);
        if (!(w & F_REVEAL == 0)) _revert(AlreadyRevealed.selector);
        if (!(keccak256(abi.encodePacked(secret, msg.sender, address(this), block.chainid)) == _commitment[msg.sender]))
            _revert(SecretMismatch.selector);
        _client[msg.sender] = w | F_REVEAL;
        _secret[msg.sender] = secret;
        _revealed += 1;
        emit Revealed(msg.sender, secret);
        if (_revealed == _committed && (_committed == M || block.number > commitDeadline)) _elect();
    }

    /// After the reveal deadline anyone may close the election: non-committers and non-revealers
    /// are excluded. With no reveal at all the session ends.
    function finalizeElection() external {
        if (!(_clients.length == M)) _revert(RegistrationOpen.selector);
        if (!(!_hot.started && !_hot.ended)) _revert(ElectionOver.selector);
        if (!(block.number > uint256(_closeBlock) + COMMIT_BLOCKS + REVEAL_BLOCKS)) _revert(RevealDeadlineNotPassed.selector);
        _elect();
    }

    function _elect() internal {
        bytes memory packed;
        uint64 mask;
        uint256 n = _clients.length;
        for (uint256 i = 0; i < n; i++) {
            address a = _clients[i];
            uint256 w = _client[a];
            if (w & F_REVEAL != 0) {
                _participants.push(a);
                mask |= uint64(1) << uint8(w >> SH_INDEX);
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
        _onElected(h, mask);
        _hot = h;
        emit Elected(s, act, 0, uint8(np), 0);
    }

    /// Re-election when the active client is overdue: the open TRAIN round has been ready for its
    /// gradient for more than activeBlocks blocks (ready: the block its last submission landed, or
    /// it became head, or it was aggregated or expired, whichever is latest; a late submitter
    /// therefore cannot shorten the active client's time), or the oldest epoch whose metrics or
    /// rewards are missing has been complete that long (counted from the latest of that event, the
    /// current active client's election and, optimistic mode, the close of the epoch's dispute
    /// window, before which its payout is refused). The successor is keccak256(electionSeed, round)'s
    /// draw: it depends on neither the block nor the caller, so choosing when to call (or who
    /// calls) cannot change it; it is public, which matters only to someone who can make the
    /// active client late, and the deadline above leaves that to the active client alone.
    function reelect() external {
        Hot memory h = _hot;
        if (!(h.started)) _revert(NoElectionYet.selector);
        uint256 since = _activeSince;
        bool overdue;
        if (!h.ended && _headWaiting(h)) {
            uint256 ready = _readyAt(h);
            uint256 from = ready > since ? ready : since;
            overdue = block.number > from + ACTIVE_BLOCKS;
        }
        if (!overdue) {
            uint32 e = _unsettled;
            if (e < EPOCHS && _epochComplete(e, h)) {
                uint256 doneAt = _settleFrom(e);
                uint256 from = doneAt > since ? doneAt : since;
                overdue = block.number > from + ACTIVE_BLOCKS;
            }
        }
        if (!(overdue)) _revert(ActiveNotOverdue.selector);
        _reelect(h.round, 1);
    }

    function _reelect(uint64 round, uint8 reason) internal {
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



    /// Calldata word i of q with the bytes past q's end cleared (ABI padding is not trusted).
    function _word(bytes calldata q, uint256 i) internal pure returns (uint256 x) {
        assembly ("memory-safe") {
            x := calldataload(add(q.offset, shl(5, i)))
            let end := shl(5, add(i, 1))
            if gt(end, q.length) {
                x := and(x, not(sub(shl(shl(3, sub(end, q.length)), 1), 1)))
            }
        }
    }





    /// The open (head) round is done: open the next one, or end the session after the last.
    function _advance(Hot memory h) internal virtual {
        if (uint256(h.round) + 1 == TOTAL_ROUNDS) {
            h.ended = true;
            emit SessionEnded(TOTAL_ROUNDS);
        } else {
            h.round += 1;
            h.count = 0;
            h.openedAt = uint40(block.number);
        }
    }



    // ------------------------------------------------------------------ active client

    /// The active client posts the gradient of the loss w.r.t. the aggregated embedding
    /// (coords IEEE-754 binary32, big-endian: the window's batches in order, each B*P row-major)
    /// and the fusion head's parameters (opaque bytes).
    function postGradient(uint64 round, bytes calldata gradient, bytes calldata fusionParams) external {
        if (!(msg.sender == _active)) _revert(NotActive.selector);
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        if (!(round <= h.round)) _revert(RoundNotOpen.selector, round, h.round);
        if (!(round == h.round)) _revert(RoundClosed.selector, round, h.round);
        if (!(_isTrain(round))) _revert(EvalRound.selector, round);
        if (!(_headComplete(h))) _revert(RoundNotComplete.selector, round);
        if (!(gradient.length == _coords(round) * 4)) _revert(BadGradientLength.selector, _coords(round) * 4, gradient.length);
        if (!(fusionParams.length <= MAX_FUSION_PARAMS)) _revert(FusionParamsTooLong.selector, MAX_FUSION_PARAMS, fusionParams.length);
        _fusionHash = keccak256(fusionParams);
        _fusionRound = round;
        emit GradientPosted(round, msg.sender, gradient, fusionParams);
        _advance(h);
        _hot = h;
    }

    /// A label holder posts dLoss/dlogits for its rows of a complete TRAIN round whose gradient is
    /// not posted yet, once per round (see the header for the encoding).
    function postLabelGradient(uint64 round, bytes calldata grad) external {
        uint256 w = _client[msg.sender];
        if (!(w & F_LABEL != 0)) _revert(NotLabelHolder.selector);
        if (!(w & F_EXCL == 0)) _revert(ClientExcluded.selector);
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        if (!(round <= h.round)) _revert(RoundNotOpen.selector, round, h.round);
        if (!(round == h.round)) _revert(RoundClosed.selector, round, h.round);
        if (!(_isTrain(round))) _revert(EvalRound.selector, round);
        if (!(_headComplete(h))) _revert(RoundNotComplete.selector, round);
        uint256 unit = _rows(round) * 4;
        if (!(grad.length != 0 && grad.length % unit == 0 && grad.length <= unit * 256)) _revert(BadLabelGradientLength.selector, unit, grad.length);
        uint256 lp = _labelPosts;
        uint256 posted = lp >> 64 == round ? lp & 0xFFFFFFFFFFFFFFFF : 0;
        uint256 bit = uint256(1) << ((w >> SH_INDEX) & 0xFF);
        if (!(posted & bit == 0)) _revert(LabelGradientAlreadyPosted.selector, round);
        _labelPosts = (uint256(round) << 64) | posted | bit;
        emit LabelGradientPosted(round, msg.sender, grad);
    }

    /// The active client posts the epoch's test metrics (micro units), once per epoch.
    function postMetrics(uint32 epoch, uint32 aurocMicro, uint32 accuracyMicro, uint64 lossMicro) external {
        if (!(msg.sender == _active)) _revert(NotActive.selector);
        if (!(epoch < EPOCHS)) _revert(NoSuchEpoch.selector, epoch);
        if (!(_epochComplete(epoch, _hot))) _revert(EpochNotComplete.selector, epoch);
        uint256 st = _epoch[epoch];
        if (!(st & 1 == 0)) _revert(MetricsAlreadyPosted.selector, epoch);
        if (!(aurocMicro <= 1e6 && accuracyMicro <= 1e6)) _revert(MetricAbove1e6.selector);
        _epoch[epoch] = st | 1;
        emit MetricsPosted(epoch, msg.sender, aurocMicro, accuracyMicro, lossMicro);
        _settle();
    }

    /// The active client triggers the epoch's payout; the contract decides who gets what: every
    /// client gets (due - rewarded) * rewardPerSubmission, due being its accepted submissions to
    /// the rounds up to the epoch's last (a submission to a later round, which an expiry may still
    /// void or a dispute roll back, is paid with its own epoch). A client already paid for as much
    /// gets nothing (rewarded never exceeds accepted, and no order of calls can underflow).
    /// Optimistic mode: refused DisputeWindowOpen while a claim of the epoch can still be disputed.
    function payRewards(uint32 epoch) external {
        if (!(msg.sender == _active)) _revert(NotActive.selector);
        if (!(epoch < EPOCHS)) _revert(NoSuchEpoch.selector, epoch);
        if (!(_epochComplete(epoch, _hot))) _revert(EpochNotComplete.selector, epoch);
        uint256 st = _epoch[epoch];
        if (!(st & 2 == 0)) _revert(RewardsAlreadyPaid.selector, epoch);
        _epoch[epoch] = st | 2;
        uint256 n = _clients.length;
        Hot memory h = _hot;
        bool paid;
        uint256 cap = _epochEnd(epoch);
        _onPay(epoch);
        for (uint256 i = 0; i < n; i++) {
            address a = _clients[i];
            uint256 w = _client[a];
            uint256 acc = _accepted(w, h);
            if (acc > cap) acc = cap;
            uint256 rew = (w >> SH_REW) & M32;
            if (acc <= rew) continue;
            paid = true;
            _client[a] = (w & ~(M32 << SH_REW)) | (acc << SH_REW);
            uint256 amount = (acc - rew) * RATE;
            emit RewardsPaid(epoch, a, amount, uint32(acc - rew));
            if (!(token.transfer(a, amount))) _revert(TransferFailed.selector);
        }
        // nobody was due (all already paid by an earlier call): still log that the epoch is settled
        if (!paid) emit RewardsPaid(epoch, address(0), 0, 0);
        _settle();
    }

    function _settle() internal {
        uint32 e = _unsettled;
        while (e < EPOCHS && _epoch[e] & 3 == 3) e++;
        _unsettled = e;
    }

    // ------------------------------------------------------------------ helpers

    /// Accepted submissions of a client. A participant has submitted every round before the
    /// open one (a round completes only when every participant submitted), plus the open round
    /// if its bit is set; an excluded client's count was frozen when it was excluded.
    function _accepted(uint256 w, Hot memory h) internal view returns (uint256) {
        if (w & F_EXCL != 0) return (w >> SH_ACC) & M32;
        if (w & F_REG == 0 || !h.started) return 0;
        return _acceptedLive(w, h);
    }

    /// Reverts with custom error `sel` and no arguments. One shared encoding for every call site
    /// of this base: an inline `revert E(args)` repeats the encoding per site, and converting the
    /// base's 49 sites adds 512 bytes to every contract built on it, which takes
    /// BbvflOptimisticAggregator from 24,517 to 25,029 bytes, over EIP-170's 24,576 (contract/GAS.md,
    /// "Contract sizes"). The compiler does not check `sel`'s arguments here: each call site passes
    /// exactly the arguments its error declares, in order, as static words (uint/bool/address);
    /// contract/test/ErrorSites.t.sol holds them to it. The deployable contracts' own checks use
    /// compiler-checked `revert E(args)` where their size allows.
    function _revert(bytes4 sel) internal pure {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, sel)
            revert(p, 4)
        }
    }

    /// Reverts with custom error `sel` and one static argument word (uint/bool/address).
    function _revert(bytes4 sel, uint256 a) internal pure {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, sel)
            mstore(add(p, 4), a)
            revert(p, 36)
        }
    }

    /// Reverts with custom error `sel` and two static argument words.
    function _revert(bytes4 sel, uint256 a, uint256 b) internal pure {
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, sel)
            mstore(add(p, 4), a)
            mstore(add(p, 36), b)
            revert(p, 68)
        }
    }

    // ------------------------------------------------------------------ mode hooks

    /// Accepted submissions of a registered, non-excluded client once training started.
    function _acceptedLive(uint256 w, Hot memory h) internal view virtual returns (uint256);

    /// The head round's sum exists (lane: every participant submitted; hashed: aggregated).
    function _headComplete(Hot memory h) internal view virtual returns (bool);

    /// The head round waits for the active client (the reelect() deadline applies).
    function _headWaiting(Hot memory h) internal view virtual returns (bool);

    /// The latest of `at` and the blocks of the submission words at base + i for each bit i of
    /// `m` (the hashed modes' words: bits 192..223 hold the block mod 2^32, the round tag above
    /// them a multiple of 2^32 there, so the masked difference ignores it: block = now - (now -
    /// stored) mod 2^32, exact for a submission less than 2^32 blocks old).
    function _latestSubmission(uint256 base, uint256 m, uint256 at) internal view returns (uint256) {
        assembly ("memory-safe") {
            for { let i := 0 } m {
                i := add(i, 1)
                m := shr(1, m)
            } {
                if and(m, 1) {
                    let b := sub(number(), and(sub(number(), shr(192, sload(add(base, i)))), 0xffffffff))
                    if gt(b, at) { at := b }
                }
            }
        }
        return at;
    }

    /// payRewards(epoch) checks (the optimistic mode: refused while a claim can be disputed).
    function _onPay(uint32 epoch) internal view virtual {}

    /// Block from which epoch e's settlement is due (reelect's epoch deadline counts from it):
    /// the completion of the latest completed epoch (>= that of epoch e, so never earlier than it
    /// should be); the optimistic mode: not before the close of epoch e's dispute window.
    function _settleFrom(uint32) internal view virtual returns (uint256) {
        return uint64(_epochDone);
    }

    /// Block from which a waiting head round (_headWaiting) has been ready for the active client:
    /// the active deadline counts from it. Lane mode: its completion (h.completedAt).
    function _readyAt(Hot memory h) internal view virtual returns (uint256) {
        return h.completedAt;
    }

    /// Participants that submitted to the head round.
    function _headCount(Hot memory h) internal view virtual returns (uint8);

    /// True in the hashed mode (BbvflHashAggregator).
    function _hashed() internal pure virtual returns (bool);

    /// Called once by the election with the participants' index bitmap.
    function _onElected(Hot memory h, uint64 mask) internal virtual;

    /// Excludes (with `reason`: 3 from expireRound) the participants whose index bit is not in `keep`, freezing their
    /// accepted count at the head round; rebuilds the participant list. Returns whether the
    /// active client was among them.
    function _excludeMissing(Hot memory h, uint64 keep, uint8 reason) internal returns (bool activeOut) {
        uint256 np = _participants.length;
        address[] memory kept = new address[](np);
        uint256 n;
        for (uint256 i = 0; i < np; i++) {
            address a = _participants[i];
            uint256 w = _client[a];
            if (keep & (uint64(1) << uint8(w >> SH_INDEX)) != 0) {
                kept[n++] = a;
            } else {
                // it contributed to every round before the head: freeze that count
                _client[a] = w | F_EXCL | (uint256(h.round) << SH_ACC);
                if (a == _active) activeOut = true;
                emit Excluded(a, reason);
            }
        }
        delete _participants;
        for (uint256 i = 0; i < n; i++) _participants.push(kept[i]);
        h.n = uint8(n);
    }

    /// Records the epoch's completion when r is the last round of its epoch.
    function _markEpoch(uint64 r) internal {
        (uint256 e, uint256 pos,) = _locate(uint256(r) + 1);
        if (pos == 0) {
            // one reused word (pre-set non-zero in the constructor): no fresh storage here
            _epochDone = EPOCH_DONE_SET | e << 64 | block.number;
        }
    }

    /// The session has curvature rounds (hashed mode: never, its constructor refuses them).
    function _curvOn() internal view virtual returns (bool) {
        return CURV_EVERY != 0;
    }

    /// Curvature epochs among epochs 0..e-1: those with (k+1) % L == 0 and k+1 >= 2L.
    function _curvEpochs(uint256 e, uint256 L) internal pure returns (uint256) {
        return L == 0 || e < 2 * L ? 0 : e / L - 1;
    }

    /// Epoch of round r and its position in the epoch; ce: the epoch has curvature rounds.
    /// Without them (CURV_EVERY 0) an epoch is T + V rounds. With them, every L-th epoch from the
    /// 2L-th is T + C + V rounds: its T TRAIN windows, C curvature rounds, its V EVAL rounds.
    function _locate(uint256 r) internal view virtual returns (uint256 e, uint256 pos, bool ce) {
        uint256 per = uint256(T) + V;
        uint256 L = CURV_EVERY;
        if (L == 0 || r < L * per) return (r / per, r % per, false);
        uint256 x = r - L * per;
        uint256 blk = L * per + C_CURV; // L epochs, the last with its curvature rounds
        uint256 o = x % blk;
        uint256 k = o / per;
        if (k >= L - 1) k = L - 1;
        return (L + (x / blk) * L + k, o - k * per, k == L - 1);
    }

    /// Layout of round r (see the header): TRAIN window `index` or EVAL round `index`, its rows.
    /// Curvature rounds take a gradient as TRAIN rounds do: train is true, index T + c for the c-th.
    function _layout(uint64 r) internal view returns (bool train, uint32 epoch, uint32 index, uint256 rows) {
        (uint256 e, uint256 pos, bool ce) = _locate(r);
        uint256 tc = ce && _curvOn() ? uint256(T) + C_CURV : T;
        epoch = uint32(e);
        train = pos < tc;
        if (pos < T) {
            index = uint32(pos);
            uint256 left = R_BATCHES - uint256(pos) * K_WINDOW;
            rows = (left < K_WINDOW ? left : K_WINDOW) * B;
        } else if (train) {
            index = uint32(pos);
            uint256 left = CURV_ROWS - (pos - T) * K_WINDOW;
            rows = left < K_WINDOW ? left : K_WINDOW;
        } else {
            index = uint32(pos - tc);
            uint256 left = NE - uint256(index) * ER;
            rows = left < ER ? left : ER;
        }
    }

    /// Bytes of a submission to round r (the submit path's cheap form of _layout).
    function _dataLen(uint256 r) internal view returns (uint256 len) {
        if (_curvOn()) return _rows(uint64(r)) * (uint256(P) << (MASKED ? 1 : 0));
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

    function _rows(uint64 r) internal view returns (uint256 rows) {
        (,,, rows) = _layout(r);
    }

    function _coords(uint64 r) internal view returns (uint256) {
        return _rows(r) * P;
    }

    function _isTrain(uint64 r) internal view returns (bool train) {
        if (!_curvOn()) return r % (uint64(T) + V) < T;
        (train,,,) = _layout(r);
    }

    function _isComplete(uint64 r, Hot memory h) internal view returns (bool) {
        if (!h.started) return false;
        if (r < h.round) return true;
        return r == h.round && (h.ended || _headComplete(h));
    }

    /// The first round after epoch e (the number of rounds of epochs 0..e).
    function _epochEnd(uint32 e) internal view returns (uint256) {
        uint256 n = uint256(e) + 1;
        return n * (uint256(T) + V) + (_curvOn() ? _curvEpochs(n, CURV_EVERY) * C_CURV : 0);
    }

    function _epochComplete(uint32 e, Hot memory h) internal view returns (bool) {
        return _isComplete(uint64(_epochEnd(e) - 1), h);
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
        p.staleness = STALENESS;
        p.hashed = _hashed();
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
        p.curvEvery = CURV_EVERY;
        p.curvRows = CURV_ROWS;
        p.curvRoundsPerEpoch = C_CURV;
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
        uint8 count = h.started ? _headCount(h) : 0;
        return (h.round, count, h.n, h.started && count == h.n, h.openedAt, h.completedAt);
    }

    /// Layout of round r < totalRounds: kind, epoch, index (window or eval round), rows and
    /// coordinates (rows * P) it carries.
    function roundLayout(uint64 r)
        external
        view
        returns (bool train, uint32 epoch, uint32 index, uint32 rows, uint32 coords)
    {
        if (!(r < TOTAL_ROUNDS)) _revert(NoSuchRound.selector, r);
        uint256 n;
        (train, epoch, index, n) = _layout(r);
        rows = uint32(n);
        coords = uint32(n * P);
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
