/* Fuzz target: the CSV loader (bbvfl_csv_parse). The first byte picks the options (label column
 * by name or the last one, with or without an id column); the rest is the file's text. Any input
 * gives either a dataset that keeps the loader's promises (at least one row and one feature, every
 * feature finite, every label a valid class index, every name a string) or an error with a
 * message, never a crash, a read past the input or a leak. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ml/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

static const char *const SEEDS[] = {
    "\x00" "a,b,y\n1,2,0\n3,4,1\n",
    "\x01" "id,a,b,label\n7,1.5,-2e3,M\n8,0.25,1e-3,B\n9,3,4,M\n",
    "\x02" "a,y,b\r\n1,x,2\r\n3,z,4\r\n",
    "\x03" "id,f1,f2,f3,y\n1,0,0,0,1\n2,1,1,1,2\n3,2,2,2,10\n",
    "\x00" "a,b,y\n1,nan,0\n",
    "\x00" "a,b,y\n1,2\n",
    "\x00" "\"a\",\"b\",y\n1,2,0\n",
    "\x00" "a,b,y\n\n1,2,0\n\n",
};

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  for (size_t i = 0; i < sizeof SEEDS / sizeof SEEDS[0]; i++)
    add((const uint8_t *)SEEDS[i], 1 + strlen(SEEDS[i] + 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  bbvfl_csv_opts o = {NULL, NULL};
  switch (data[0] & 3) {
    case 1: o.label = "label"; o.id_column = "id"; break;
    case 2: o.label = "y"; break;
    case 3: o.id_column = "id"; break;
    default: break;
  }
  bbvfl_dataset ds;
  memset(&ds, 0, sizeof ds);
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  int rc = bbvfl_csv_parse((const char *)data + 1, size - 1, "fuzz.csv", &o, &ds, &err);
  if (rc == 0) {
    if (ds.n < 1 || ds.d < 1 || ds.nclasses < 1) __builtin_trap();
    for (size_t i = 0; i < ds.n * ds.d; i++)
      if (!isfinite(ds.x[i])) __builtin_trap();
    for (size_t i = 0; i < ds.n; i++)
      if (ds.y[i] < 0 || ds.y[i] >= ds.nclasses) __builtin_trap();
    for (size_t j = 0; j < ds.d; j++)
      if (!ds.feature_names[j] || strlen(ds.feature_names[j]) > size) __builtin_trap();
    for (int c = 0; c < ds.nclasses; c++)
      if (!ds.class_names[c]) __builtin_trap();
    if (!ds.label_name) __builtin_trap();
  } else {
    if (err.code == BBVFL_OK || err.msg[0] == 0) __builtin_trap(); /* errors always explain */
    if (memchr(err.msg, 0, sizeof err.msg) == NULL) __builtin_trap();
    if (strstr(err.msg, "fuzz.csv") == NULL) __builtin_trap(); /* errors name the file */
  }
  bbvfl_dataset_free(&ds);
  return 0;
}
