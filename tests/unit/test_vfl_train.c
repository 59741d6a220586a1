/* The off-chain VFL loop end to end (short runs), the in-process aggregator's checks, party and
 * head checkpoints and the big-endian parameter encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include "train_fixture.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <jansson.h>
#include <unistd.h>

#include "dp/labeldp.h"
#include "core/aggregator.h"
#include "core/head.h"
#include "offchain/offchain.h"
#include "core/party.h"
#include "core/setup.h"


static void run(bbvfl_mech_kind k, int epochs, uint64_t seed, bbvfl_offchain_result *res) {
  bbvfl_offchain_cfg c;
  bbvfl_offchain_defaults(&c);
  c.seeded_noise = 1; /* reproducible noise: these tests compare runs bit for bit */
  c.mech.kind = k;
  c.epochs = epochs;
  c.seed = seed;
  bbvfl_test_train(&c, res);
}

static void test_short_training(void **st) {
  (void)st;
  bbvfl_mech_kind kinds[] = {BBVFL_MECH_PBM, BBVFL_MECH_NPQ, BBVFL_MECH_GAUSSIAN};
  for (int i = 0; i < 3; i++) {
    bbvfl_offchain_result r;
    run(kinds[i], 3, 2, &r);
    assert_int_equal(r.R, 45);
    assert_int_equal(r.T, 45);
    assert_int_equal(r.V, 1); /* every test row in one evaluation round */
    assert_int_equal(r.n_eval_rows, 114);
    assert_int_equal(r.n_train, 455);
    /* the loss goes down, and the model is far better than chance and than always answering the
       majority class (accuracy 0.627 on this test split). After 3 epochs, seeds 1..8 reach test
       accuracy 0.91-0.98 (PBM), 0.94-0.99 (NPQ), 0.83-0.89 (Gaussian, the noisiest), AUROC >= 0.906:
       `bbvfl train --offchain --epochs 3 --seed S --mechanism M --json` */
    assert_true(r.per_epoch[2].train_loss < r.per_epoch[0].train_loss);
    assert_true(r.per_epoch[2].auroc > 0.9);
    assert_true(r.per_epoch[2].accuracy > 0.8);
    assert_true(r.agg_train_s_per_epoch > 0);
    bbvfl_offchain_result_free(&r);
  }
}

static void test_deterministic(void **st) {
  (void)st;
  bbvfl_offchain_result a, b, c;
  run(BBVFL_MECH_PBM, 2, 9, &a);
  run(BBVFL_MECH_PBM, 2, 9, &b);
  run(BBVFL_MECH_PBM, 2, 10, &c);
  for (int e = 0; e < 2; e++) {
    assert_true(a.per_epoch[e].train_loss == b.per_epoch[e].train_loss);
    assert_true(a.per_epoch[e].auroc == b.per_epoch[e].auroc);
  }
  assert_true(a.per_epoch[1].train_loss != c.per_epoch[1].train_loss);
  bbvfl_offchain_result_free(&a);
  bbvfl_offchain_result_free(&b);
  bbvfl_offchain_result_free(&c);
}

static void test_aggregator_rules(void **st) {
  (void)st;
  bbvfl_agg a;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_agg_inproc_new(&a, 2, 4, 3, &err), 0);
  uint8_t q0[4] = {0, 1, 2, 3}, q1[4] = {3, 3, 3, 3}, bad[4] = {0, 4, 0, 0};
  uint32_t s[4];
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 0, q0, 4, &err), 0);
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 0, q0, 4, &err), -1); /* twice */
  assert_non_null(strstr(err.msg, "already submitted"));
  assert_int_equal(bbvfl_agg_sum_q(&a, 0, s, 4, &err), -1); /* incomplete */
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 1, bad, 4, &err), -1); /* > b */
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 1, q1, 3, &err), -1);  /* length */
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 2, q1, 4, &err), -1);  /* not registered */
  assert_int_equal(bbvfl_agg_submit_q(&a, 1, 1, q1, 4, &err), -1);  /* another round while 0 is open */
  assert_int_equal(bbvfl_agg_submit_q(&a, 0, 1, q1, 4, &err), 0);
  assert_int_equal(bbvfl_agg_sum_q(&a, 0, s, 4, &err), 0);
  uint32_t want[4] = {3, 4, 5, 6};
  assert_memory_equal(s, want, sizeof want);
  float g[4] = {1, 2, 3, 4}, g2[4];
  assert_int_equal(bbvfl_agg_read_gradient(&a, 0, g2, 4, &err), -1);
  assert_int_equal(bbvfl_agg_post_gradient(&a, 0, g, 4, NULL, 0, &err), 0);
  assert_int_equal(bbvfl_agg_read_gradient(&a, 0, g2, 4, &err), 0);
  assert_memory_equal(g, g2, sizeof g);
  assert_int_equal(bbvfl_agg_read_gradient(&a, 1, g2, 4, &err), -1);
  assert_int_equal(bbvfl_agg_post_gradient(&a, BBVFL_EVAL_ROUND_BASE, g, 4, NULL, 0, &err), -1);
  bbvfl_agg_inproc_stats stt;
  bbvfl_agg_inproc_stats_get(&a, &stt, 1);
  assert_int_equal(stt.train_rounds, 1);
  bbvfl_agg_destroy(&a);
  /* float rounds (NPQ / Gaussian): exact sums, vector body and scalar tail */
  assert_int_equal(bbvfl_agg_inproc_new(&a, 3, 6, 255, &err), 0);
  float f[3][6], fs[6];
  uint32_t s6[6];
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < 6; i++) f[m][i] = (float)(m * 10 + i) * 0.5f;
  for (int m = 0; m < 3; m++) assert_int_equal(bbvfl_agg_submit_f(&a, 5, m, f[m], 6, &err), 0);
  assert_int_equal(bbvfl_agg_sum_q(&a, 5, s6, 6, &err), -1); /* float round read as integers */
  assert_int_equal(bbvfl_agg_sum_f(&a, 5, fs, 6, &err), 0);
  for (int i = 0; i < 6; i++) assert_true(fs[i] == (float)(30 + 3 * i) * 0.5f);
  bbvfl_agg_destroy(&a);
}

static void test_checkpoints(void **st) {
  (void)st;
  char dir[] = "/tmp/bbvfl-test-ckpt-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char ppath[256], hpath[256];
  snprintf(ppath, sizeof ppath, "%s/party0.ckpt", dir);
  snprintf(hpath, sizeof hpath, "%s/head.ckpt", dir);
  bbvfl_party_cfg pc = {.index = 0, .P = 4, .nhidden = 1, .hidden = {5}, .seed = 3, .seeded_noise = 1};
  pc.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.2, .C = 1};
  bbvfl_optim_defaults(&pc.opt);
  float x[6 * 3];
  for (int i = 0; i < 18; i++) x[i] = (float)sin(i);
  bbvfl_party a, b;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_party_init(&a, &pc, x, 6, 3, &err), 0);
  assert_int_equal(bbvfl_party_init(&b, &pc, x, 6, 3, &err), 0);
  size_t rows[2] = {1, 4};
  uint8_t q[8], qb[8];
  float grad[8] = {0.1f, -0.2f, 0.3f, 0.0f, 0.5f, 0.1f, -0.1f, 0.2f};
  assert_int_equal(bbvfl_party_forward(&a, rows, 2, q, NULL, &err), 0);
  assert_int_equal(bbvfl_party_backward(&a, grad, &err), 0);
  assert_int_equal(bbvfl_party_save(&a, ppath, &err), 0);
  assert_int_equal(bbvfl_party_load(&b, ppath, &err), 0);
  assert_memory_equal(a.mlp.params, b.mlp.params, a.mlp.nparams * sizeof(float));
  /* both continue identically, noise included */
  assert_int_equal(bbvfl_party_forward(&a, rows, 2, q, NULL, &err), 0);
  assert_int_equal(bbvfl_party_forward(&b, rows, 2, qb, NULL, &err), 0);
  assert_memory_equal(q, qb, 8);
  pc.index = 1;
  bbvfl_party c;
  assert_int_equal(bbvfl_party_init(&c, &pc, x, 6, 3, &err), 0);
  assert_int_equal(bbvfl_party_load(&c, ppath, &err), -1); /* another client's checkpoint */
  bbvfl_party_free(&c);
  assert_int_equal(bbvfl_party_load(&a, "/nonexistent/x.ckpt", &err), -1);

  bbvfl_vhead h, h2;
  bbvfl_optim_cfg oc;
  bbvfl_optim_defaults(&oc);
  assert_int_equal(bbvfl_vhead_init(&h, 4, 2, 1, &pc.mech, &oc, 3, &err), 0);
  assert_int_equal(bbvfl_vhead_init(&h2, 4, 2, 1, &pc.mech, &oc, 4, &err), 0);
  uint32_t sum[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int y[2] = {0, 1};
  double loss;
  float g[8];
  assert_int_equal(bbvfl_vhead_train(&h, sum, NULL, y, 2, &loss, g, NULL, &err), 0);
  uint32_t over[8] = {9, 0, 0, 0, 0, 0, 0, 0}; /* > M*b = 8 */
  assert_int_equal(bbvfl_vhead_train(&h, over, NULL, y, 2, &loss, g, NULL, &err), -1);
  uint8_t be[4 * 5];
  assert_int_equal(bbvfl_vhead_nparams(&h), 5);
  bbvfl_vhead_params_be(&h, be);
  assert_int_equal(bbvfl_vhead_load_params_be(&h2, be, sizeof be, &err), 0);
  assert_memory_equal(h.fh.params, h2.fh.params, 5 * sizeof(float));
  assert_int_equal(bbvfl_vhead_load_params_be(&h2, be, 7, &err), -1);
  float one = 1.0f;
  uint8_t ob[4];
  bbvfl_f32_to_be(&one, 1, ob);
  assert_int_equal(ob[0], 0x3f);
  assert_int_equal(ob[1], 0x80);
  assert_int_equal(ob[3], 0x00);
  assert_int_equal(bbvfl_vhead_save(&h, hpath, &err), 0);
  assert_int_equal(bbvfl_vhead_load(&h2, hpath, &err), 0);
  assert_int_equal(h2.opt.t, h.opt.t);
  assert_int_equal(bbvfl_vhead_load(&h2, ppath, &err), -1); /* a party checkpoint is not a head */
  bbvfl_vhead_free(&h);
  bbvfl_vhead_free(&h2);
  bbvfl_party_free(&a);
  bbvfl_party_free(&b);
  unlink(ppath);
  unlink(hpath);
  rmdir(dir);
}

/* Private noise (issue 28): the same seed without reproducible noise gives different PBM payloads
 * and randomized labels (the initialisation stays the seed's); a client's own noise key gives its
 * owner the same draws again, and a restart from its checkpoint (mode 0600) continues the stream
 * where it stopped instead of repeating or redrawing it. */
static void test_party_noise_key(void **st) {
  (void)st;
  char dir[] = "/tmp/bbvfl-test-nkey-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char ppath[256];
  snprintf(ppath, sizeof ppath, "%s/party0.ckpt", dir);
  uint8_t key[32], key2[32];
  for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 7 + 1), key2[i] = (uint8_t)(i * 7 + 2);
  bbvfl_party_cfg pc = {.index = 0, .P = 4, .nhidden = 1, .hidden = {5}, .seed = 3, .seeded_noise = 0};
  pc.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = 16, .beta = 0.2, .C = 1};
  bbvfl_optim_defaults(&pc.opt);
  float x[16 * 3];
  for (int i = 0; i < 48; i++) x[i] = (float)sin(i);
  size_t rows[8] = {0, 2, 3, 5, 7, 9, 11, 15};
  enum { NQ = 8 * 4 };
  bbvfl_err err = {0};
  bbvfl_party os1, os2, k1, k2, kr, kf;
  uint8_t q1[NQ], q2[NQ], qk1[NQ], qk2[NQ], qnext[NQ], qr[NQ], qf[NQ];
  /* the same seed, OS noise: the same initialisation, different payloads */
  assert_int_equal(bbvfl_party_init(&os1, &pc, x, 16, 3, &err), 0);
  assert_int_equal(bbvfl_party_init(&os2, &pc, x, 16, 3, &err), 0);
  assert_memory_equal(os1.mlp.params, os2.mlp.params, os1.mlp.nparams * sizeof(float));
  assert_int_equal(bbvfl_party_forward(&os1, rows, 8, q1, NULL, &err), 0);
  assert_int_equal(bbvfl_party_forward(&os2, rows, 8, q2, NULL, &err), 0);
  assert_memory_not_equal(q1, q2, NQ);
  /* the owner's key: the same draws for its owner */
  pc.noise_key = key;
  assert_int_equal(bbvfl_party_init(&k1, &pc, x, 16, 3, &err), 0);
  assert_int_equal(bbvfl_party_init(&k2, &pc, x, 16, 3, &err), 0);
  assert_int_equal(bbvfl_party_forward(&k1, rows, 8, qk1, NULL, &err), 0);
  assert_int_equal(bbvfl_party_forward(&k2, rows, 8, qk2, NULL, &err), 0);
  assert_memory_equal(qk1, qk2, NQ);
  /* a restart: the checkpoint (mode 0600) carries the stream's position */
  assert_int_equal(bbvfl_party_save(&k1, ppath, &err), 0);
  struct stat sb;
  assert_int_equal(stat(ppath, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0600);
  assert_int_equal(bbvfl_party_forward(&k1, rows, 8, qnext, NULL, &err), 0);
  assert_int_equal(bbvfl_party_init(&kr, &pc, x, 16, 3, &err), 0);
  assert_int_equal(bbvfl_party_load(&kr, ppath, &err), 0);
  assert_int_equal(bbvfl_party_forward(&kr, rows, 8, qr, NULL, &err), 0);
  assert_memory_equal(qnext, qr, NQ); /* continues where it stopped */
  /* without the checkpoint's position the key would repeat the first draws: not what a restart does */
  assert_int_equal(bbvfl_party_init(&kf, &pc, x, 16, 3, &err), 0);
  assert_int_equal(bbvfl_party_forward(&kf, rows, 8, qf, NULL, &err), 0);
  assert_memory_equal(qf, qk1, NQ);
  assert_memory_not_equal(qf, qr, NQ);
  /* randomized labels: the same key redraws the same responses, another key or the OS does not */
  int y0[64], ya[64], yb[64], yc[64], yd[64];
  size_t tr[64];
  for (int i = 0; i < 64; i++) y0[i] = i % 2, tr[i] = (size_t)i;
  memcpy(ya, y0, sizeof y0);
  memcpy(yb, y0, sizeof y0);
  memcpy(yc, y0, sizeof y0);
  memcpy(yd, y0, sizeof y0);
  assert_int_equal(bbvfl_rr_labels_keyed(ya, tr, 64, 2, 0.5, 0, 7, key, &err), 0);
  assert_int_equal(bbvfl_rr_labels_keyed(yb, tr, 64, 2, 0.5, 0, 7, key, &err), 0);
  assert_int_equal(bbvfl_rr_labels_keyed(yc, tr, 64, 2, 0.5, 0, 7, key2, &err), 0);
  assert_int_equal(bbvfl_rr_labels_keyed(yd, tr, 64, 2, 0.5, 0, 7, NULL, &err), 0);
  assert_memory_equal(ya, yb, sizeof ya);
  assert_memory_not_equal(ya, yc, sizeof ya);
  assert_memory_not_equal(ya, yd, sizeof ya);
  assert_memory_not_equal(ya, y0, sizeof ya);
  bbvfl_party *all[] = {&os1, &os2, &k1, &k2, &kr, &kf};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) bbvfl_party_free(all[i]);
  unlink(ppath);
  rmdir(dir);
}

/* VFL-AFE before PBM (on chain): each row clipped to L2 norm t before the quantisation, so with a
 * tiny t every coordinate's count sits at b/2 (no signal), while the same saturated embeddings
 * without AFE sit near the ends; the window keeps each row's clip factor for the backward. */
static void test_party_afe_pbm(void **st) {
  (void)st;
  bbvfl_party_cfg pc = {.index = 0, .P = 4, .nhidden = 1, .hidden = {5}, .seed = 3, .seeded_noise = 0};
  pc.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = 255, .beta = 0.49, .C = 1, .clip = 1e-6};
  bbvfl_optim_defaults(&pc.opt);
  float x[16 * 3];
  for (int i = 0; i < 48; i++) x[i] = (float)(100 * sin(i));
  size_t rows[8] = {0, 2, 3, 5, 7, 9, 11, 15};
  uint8_t q[32];
  bbvfl_err err = {0};
  double dev[2];
  for (int on = 0; on < 2; on++) {
    bbvfl_afe_defaults(&pc.afe);
    pc.afe.on = on;
    pc.afe.rescale = on;
    pc.afe.B = 8;
    pc.afe.nclasses = 2;
    bbvfl_party p;
    if (bbvfl_party_init(&p, &pc, x, 16, 3, &err) != 0) fail_msg("%s", err.msg);
    assert_int_equal(bbvfl_party_forward(&p, rows, 8, q, NULL, &err), 0);
    dev[on] = 0;
    for (int i = 0; i < 32; i++) dev[on] += fabs(q[i] - 127.5) / 32;
    if (on) {
      assert_non_null(p.last.scale);
      for (int i = 0; i < 8; i++) assert_true(p.last.scale[i] < 1e-4f);
    }
    bbvfl_party_free(&p);
  }
  if (!(dev[0] > 50 && dev[1] < 25)) fail_msg("mean |q - b/2|: %.1f without AFE, %.1f with t = 1e-6", dev[0], dev[1]);
  /* NPQ has no AFE */
  pc.mech.kind = BBVFL_MECH_NPQ;
  bbvfl_party p;
  assert_int_equal(bbvfl_party_init(&p, &pc, x, 16, 3, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
}

/* Three well-separated classes: softmax head, cross-entropy, macro metrics. */
static void test_multiclass(void **st) {
  (void)st;
  size_t cap = 1 << 16, len = 0;
  char *csv = malloc(cap);
  len += (size_t)snprintf(csv, cap, "f0,f1,f2,f3,cls\n");
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 77, 0);
  for (int i = 0; i < 300; i++) {
    int k = i % 3;
    len += (size_t)snprintf(csv + len, cap - len, "%.4f,%.4f,%.4f,%.4f,%s\n", 3.0 * k + bbvfl_rng_normal(&r),
                            bbvfl_rng_normal(&r), -2.0 * k + bbvfl_rng_normal(&r), bbvfl_rng_normal(&r),
                            k == 0 ? "red" : k == 1 ? "green" : "blue");
  }
  bbvfl_dataset ds;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_csv_parse(csv, len, "blobs", NULL, &ds, &err), 0);
  free(csv);
  assert_int_equal(ds.nclasses, 3);
  bbvfl_offchain_cfg c;
  bbvfl_offchain_defaults(&c);
  c.seeded_noise = 1; /* reproducible noise: these tests compare runs bit for bit */
  c.M = 2;
  c.epochs = 4;
  c.mech.kind = BBVFL_MECH_NPQ;
  bbvfl_offchain_result res;
  assert_int_equal(bbvfl_offchain_train(&ds, &c, &res, &err), 0);
  assert_int_equal(res.nclasses, 3);
  assert_true(res.per_epoch[3].train_loss < res.per_epoch[0].train_loss);
  assert_true(res.per_epoch[3].accuracy > 0.85);
  assert_true(res.per_epoch[3].auroc > 0.9);
  bbvfl_offchain_result_free(&res);
  bbvfl_dataset_free(&ds);
}

/* The command's interface: `bbvfl train --offchain --json` ends with one object holding the
 * documented fields, and the run folder gets metrics.csv (one line per epoch) and report.json. */
static void test_cli_json(void **st) {
  (void)st;
  const char *bin = bbvfl_test_bin();
  char dir[] = "/tmp/bbvfl-test-train-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' train --offchain --epochs 2 --seed 5 --json --out '%s'", bin, dir);
  json_t *o = bbvfl_test_run_json(cmd);
  const char *keys[] = {"auroc", "accuracy", "loss", "epsilon_feature", "offchain_agg_s_per_epoch", "epochs", "clients"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_non_null(json_object_get(o, keys[i]));
  assert_int_equal(json_integer_value(json_object_get(o, "epochs")), 2);
  assert_int_equal(json_integer_value(json_object_get(o, "clients")), 5);
  assert_true(json_real_value(json_object_get(o, "epsilon_feature")) > 0);
  json_decref(o);
  char path[256];
  snprintf(path, sizeof path, "%s/metrics.csv", dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int lines = 0;
  for (int ch; (ch = fgetc(f)) != EOF;) lines += ch == '\n';
  fclose(f);
  assert_int_equal(lines, 3);
  snprintf(path, sizeof path, "%s/report.json", dir);
  assert_int_equal(access(path, R_OK), 0);
  bbvfl_test_rm_run_dir(dir);
  /* a bad flag value is a usage error, not a crash */
  snprintf(cmd, sizeof cmd, "'%s' train --offchain --b 0 --out '%s' 2>/dev/null", bin, dir);
  int rc = system(cmd);
  assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
}

/* What each client derives alone equals what the off-chain trainer hands it. */
static void test_setup(void **st) {
  (void)st;
  bbvfl_vfl_data v, w;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_vfl_data_prepare(&bbvfl_test_ds, 4, 0.2, 5, NULL, &v, &err), 0);
  assert_int_equal(bbvfl_vfl_data_prepare(&bbvfl_test_ds, 4, 0.2, 5, "0-5/6-11/12-17/18-23/24-29", &w, &err), 0);
  assert_int_equal(v.n_train, 455);
  size_t total = 0;
  for (int m = 0; m < 5; m++) {
    float *a, *b;
    size_t na, nb;
    assert_int_equal(bbvfl_vfl_data_client_cols(&v, m, &a, &na, &err), 0);
    assert_int_equal(bbvfl_vfl_data_client_cols(&w, m, &b, &nb, &err), 0);
    assert_int_equal(na, 6);
    assert_int_equal(nb, 6);
    assert_memory_equal(a, b, bbvfl_test_ds.n * na * sizeof(float));
    double s = 0;
    for (size_t i = 0; i < v.n_train; i++) s += a[v.train[i] * na];
    assert_true(fabs(s / (double)v.n_train) < 1e-4); /* standardised on the training rows */
    total += na;
    free(a);
    free(b);
  }
  assert_int_equal(total, 30);
  float *c;
  size_t nc;
  assert_int_equal(bbvfl_vfl_data_client_cols(&v, 5, &c, &nc, &err), -1);
  bbvfl_vfl_data_free(&w);
  assert_int_equal(bbvfl_vfl_data_prepare(&bbvfl_test_ds, 4, 0.2, 4, "0-5/6-11/12-17/18-23/24-29", &w, &err), -1);
  assert_non_null(strstr(err.msg, "names 5 clients"));
  bbvfl_vfl_data_free(&v);
  uint8_t S1[32], S2[32];
  bbvfl_offchain_session_seed(4, S1);
  bbvfl_offchain_session_seed(5, S2);
  assert_memory_not_equal(S1, S2, 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_short_training), cmocka_unit_test(test_deterministic),
                                     cmocka_unit_test(test_aggregator_rules), cmocka_unit_test(test_checkpoints), cmocka_unit_test(test_party_noise_key),
                                     cmocka_unit_test(test_party_afe_pbm),
                                     cmocka_unit_test(test_multiclass),
                                     cmocka_unit_test(test_cli_json), cmocka_unit_test(test_setup)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, bbvfl_test_ds_setup, bbvfl_test_ds_teardown));
}
