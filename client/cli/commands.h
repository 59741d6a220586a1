/* Every subcommand of `bbvfl`: int cmd_NAME(int argc, char **argv) gets the arguments after its
 * name and returns the process exit status. Add a command: declare it here, list it in main.c. */
#ifndef BBVFL_CLI_COMMANDS_H
#define BBVFL_CLI_COMMANDS_H

int cmd_devnet(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_privacy(int argc, char **argv);
int cmd_key(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_attack(int argc, char **argv);
int cmd_bench_attacks(int argc, char **argv); /* bbvfl bench attacks (cmd_attack.c) */
int cmd_bench_afe(int argc, char **argv); /* bbvfl bench afe */
int cmd_sweep(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_deploy(int argc, char **argv);
int cmd_client(int argc, char **argv);
int cmd_demo(int argc, char **argv);

#endif
