/* The row-level privacy mode (`--privacy row`): what it changes and its parameters.
 *
 * The paper's mode (the default) releases each row's embedding with PBM but trains each client's
 * network on its raw rows and fits the feature scaling on all training rows, so one row moves
 * every other row's later releases: the accounting of one row's releases is not an end-to-end
 * guarantee (docs/PRIVACY.md). Row mode makes it one:
 *   - feature scaling from a DP centre and scale per column (dp/dpscale.h), pure scale_eps per
 *     party;
 *   - each client's network trained by DP-SGD: every row's gradient (dLoss/dh_hat of the row, the
 *     public posted gradient, through the network) clipped to L2 norm `clip`, Gaussian noise of
 *     standard deviation noise x clip added to the sum of the B clipped gradients, divided by B;
 *     a row is in one batch per epoch (the schedule is public: no amplification by sampling);
 *   - the PBM releases of the row, as before.
 * The accountant (dp/privacy.h) composes the three by RDP over every use of the row. */
#ifndef BBVFL_DP_ROWDP_H
#define BBVFL_DP_ROWDP_H

/* Encoder mode (encoder = 1, `--encoder pca`): the client models are not trained at all. Each
 * party's columns become sign features, sign(x - c) with c a DP median per column (pure
 * scale_eps over the party's columns, dp/dpscale.h); its model is one frozen linear layer + tanh
 * whose weights are the top P directions of a DP covariance of those features (Gaussian
 * mechanism, noise multiplier pca_noise, dp/dppca.h); each row (training and test) is released
 * ONCE by PBM and every later round that needs the row re-sends the same bytes (post-processing:
 * nothing new is revealed), so the head trains as many epochs as it likes on sums already
 * released. No DP-SGD (clip and noise unused). The accountant (dp/privacy.h) composes the
 * scaling, the DP-PCA and the one release. */
typedef struct {
  int on;           /* 1: row mode; 0: the paper's mode (fields below unused) */
  double clip;      /* DP-SGD per-row L2 clip norm, > 0 */
  double noise;     /* DP-SGD noise multiplier, > 0 */
  double scale_eps; /* pure epsilon of one party's whole DP feature scaling, > 0 */
  int encoder;      /* 1: the frozen DP-PCA encoder, each row released once (above); 0: DP-SGD */
  double pca_noise; /* encoder: the DP covariance's Gaussian noise multiplier, > 0 */
} bbvfl_rowdp;

#define BBVFL_ROWDP_CLIP 1.0
#define BBVFL_ROWDP_NOISE 2.0
#define BBVFL_ROWDP_SCALE_EPS 0.25
#define BBVFL_ROWDP_PCA_NOISE 3.0

#endif
