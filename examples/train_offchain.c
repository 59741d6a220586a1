/* Off-chain DP-BBVFL training through libbbvfl's public API, and the privacy it gives.
 *
 *   cc train_offchain.c $(pkg-config --cflags --libs bbvfl) -o train_offchain
 *   ./train_offchain data/breast_cancer.csv [EPOCHS]
 *
 * Loads a CSV (label: the last column), trains 4 clients with PBM (b 16, beta 0.2), batch 10,
 * embedding P 16 and seed 7, prints one line per epoch, then the final test AUROC and the
 * (epsilon, delta) of the run at the row level of one party's features (none: the run is seeded, so its
 * noise is the seed's; an unseeded run has private noise and an epsilon). The same run as
 *   bbvfl train --offchain --data FILE --clients 4 --b 16 --beta 0.2 --batch 10 --P 16 --seed 7 --reproducible-noise
 * Exit status: 0 on success, 1 on any error (printed with its category). */
#include <bbvfl/bbvfl.h>
#include <stdio.h>
#include <stdlib.h>

static void on_epoch(void *ctx, const bbvfl_epoch_stats *s) {
  const int *epochs = ctx;
  printf("epoch %d/%d  train loss %.4f  test AUROC %.4f\n", s->epoch, *epochs, s->train_loss, s->auroc);
}

static int fail(const char *what, const bbvfl_error *err) {
  fprintf(stderr, "train_offchain: %s: %s (%s)\n", what, err->message, bbvfl_status_name(err->code));
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s DATA.csv [EPOCHS]\n", argv[0]);
    return 1;
  }
  int epochs = argc == 3 ? atoi(argv[2]) : 5;
  if (bbvfl_version_number() < BBVFL_VERSION_NUMBER) {
    fprintf(stderr, "train_offchain: libbbvfl %s is older than its headers (%s)\n", bbvfl_version_string(),
            BBVFL_VERSION_STRING);
    return 1;
  }

  bbvfl_error err;
  bbvfl_table *table = NULL;
  if (bbvfl_table_load_csv(argv[1], NULL, NULL, &table, &err) != BBVFL_STATUS_OK) return fail(argv[1], &err);

  bbvfl_config *cfg = NULL;
  if (bbvfl_config_create(&cfg, &err) != BBVFL_STATUS_OK) {
    bbvfl_table_destroy(table);
    return fail("config", &err);
  }
  int rc = 1;
  bbvfl_run *run = NULL;
  if (bbvfl_config_set_clients(cfg, 4, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_pbm(cfg, 16, 0.2, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_batch(cfg, 10, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_embedding(cfg, 16, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_epochs(cfg, epochs, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_seed(cfg, 7, &err) != BBVFL_STATUS_OK) {
    rc = fail("config", &err);
    goto out;
  }
  printf("libbbvfl %s: %zu rows x %zu features, %d classes\n", bbvfl_version_string(), bbvfl_table_rows(table),
         bbvfl_table_features(table), bbvfl_table_classes(table));
  if (bbvfl_train(table, cfg, on_epoch, &epochs, &run, &err) != BBVFL_STATUS_OK) {
    rc = fail("training", &err);
    goto out;
  }
  bbvfl_epoch_stats last;
  bbvfl_epsilon eps;
  if (bbvfl_run_epoch(run, bbvfl_run_epochs(run), &last, &err) != BBVFL_STATUS_OK ||
      bbvfl_run_epsilon(run, BBVFL_LEVEL_ROW_FEATURE, &eps, &err) != BBVFL_STATUS_OK) {
    rc = fail("results", &err);
    goto out;
  }
  printf("final test AUROC %.6f\n", last.auroc);
  printf("epsilon %.6g at delta %g, level %s (%s), method %s, %s\n", eps.epsilon, eps.delta,
         bbvfl_level_name(eps.level), bbvfl_level_description(eps.level), eps.method,
         eps.end_to_end ? "end-to-end" : "not end-to-end");
  rc = 0;
out:
  bbvfl_run_destroy(run);
  bbvfl_config_destroy(cfg);
  bbvfl_table_destroy(table);
  return rc;
}
