/* Keeps the test support library non-empty before any helper exists. */
typedef int bbvfl_test_support_empty;
