/* The privacy of a training configuration: the one place a bbvfl_offchain_cfg (the setup the
 * off-chain trainer, a session file and every command share) becomes the input of the accountant
 * (dp/privacy.h). `bbvfl train`, `sweep`, `tune`, `demo` and the on-chain client's summary all
 * take their epsilons from here, so they cannot disagree.
 *
 * Pure computation, no printing; *out is caller-owned (dp/privacy.h). */
#ifndef BBVFL_VFL_CFGPRIVACY_H
#define BBVFL_VFL_CFGPRIVACY_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "core/config.h"

/* cfg: mechanism, P, M, epochs, label DP and row mode are read; model lr: P = cfg->P (the caller
 * sets it to K once the classes are known) and the curvature rounds of sqn compose as further
 * releases of a row (core/config.h, bbvfl_lr_releases). rows: the training row count (the
 * feature-set level; 0: not computed). masked with participants: the masked bound for the clients
 * the sums covered (after dropouts), against one colluding participant when there are two or
 * more. cfg->seeded_noise (reproducible noise) voids every epsilon (out->reproducible). delta in (0, 1). out->finite = 0 for NPQ (no guarantee). Returns 0, or -1 with err
 * (BBVFL_E_ARG: a parameter the accountant refuses, named). */
int bbvfl_cfg_privacy(const bbvfl_offchain_cfg *cfg, size_t rows, int masked, int participants, double delta,
                      bbvfl_privacy *out, bbvfl_err *err);

/* A JSON number, or null when v is not finite (infinite epsilon: no guarantee). New reference. */
json_t *bbvfl_json_num_or_null(double v);

#endif
