/*
 * The stockade admin CLI: one entry point per command group.  Each returns
 * the process exit status: 0 success, 1 a negative answer (tampered log,
 * invalid policy, refused event), 2 usage or I/O errors.
 */
#ifndef STOCKADE_CLI_H
#define STOCKADE_CLI_H

#include <stddef.h>
#include <openssl/evp.h>
#include <jansson.h>

#define EXIT_NEGATIVE	1
#define EXIT_USAGE	2

int	cmd_audit(int argc, char *argv[]);
int	cmd_net(int argc, char *argv[]);
int	cmd_rules(int argc, char *argv[]);
int	cmd_status(int argc, char *argv[]);
int	cmd_fleet(int argc, char *argv[]);
/* The live mcp-exec servers' published status in an mcp-exec state
 * folder, one object each (cli/status.c); new reference. */
json_t	*status_mcp_servers(const char *dir);
/* `stockade audit evidence` (cli/evidence.c); argv[0] is "evidence". */
int	audit_evidence(int argc, char *argv[]);
/* `stockade audit verify --fleet` (cli/fleet_verify.c); argv[0] is "verify". */
int	audit_verify_fleet(int argc, char *argv[]);
/* `stockade audit verify --bundle PATH` (cli/audit.c), with the public
 * keys of a fleet bundle's nodes (nkeys 0: each bundle's own). */
int	audit_verify_bundle(const char *path, EVP_PKEY *const *keys,
	    size_t nkeys);
/* `stockade audit report` (cli/report.c); argv[0] is "report". */
int	audit_report(int argc, char *argv[]);

#endif
