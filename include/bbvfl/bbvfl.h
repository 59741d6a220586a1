/* bbvfl public API: the one header to include.
 *
 *   #include <bbvfl/bbvfl.h>
 *   cc prog.c $(pkg-config --cflags --libs bbvfl)
 *
 * What outside code may call, and nothing else (the library's own headers are not installed):
 *   bbvfl/version.h  the version of the headers and of the linked library
 *   bbvfl/error.h    bbvfl_status (every fallible call returns one) and bbvfl_error (its message)
 *   bbvfl/data.h     bbvfl_table: a CSV data set
 *   bbvfl/train.h    bbvfl_config (clients, mechanism, b, beta, P, batch, epochs, seed ...),
 *                    bbvfl_train (off-chain vertical federated training), bbvfl_run (its metrics)
 *   bbvfl/privacy.h  the (epsilon, delta) of a configuration or a run, per neighbouring level
 * Conventions: objects are opaque, created by *_create / *_load / bbvfl_train and freed by their
 * *_destroy (which accept NULL); the error argument comes last and may be NULL; nothing prints.
 * examples/train_offchain.c in the source tree goes the whole way: load, configure, train, read
 * the metrics and the epsilon. */
#ifndef BBVFL_PUBLIC_BBVFL_H
#define BBVFL_PUBLIC_BBVFL_H

#include "bbvfl/common.h"
#include "bbvfl/data.h"
#include "bbvfl/error.h"
#include "bbvfl/privacy.h"
#include "bbvfl/session.h"
#include "bbvfl/train.h"
#include "bbvfl/version.h"

#endif
