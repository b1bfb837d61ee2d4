/*
 * `stockade net attach|detach|status`: netguard's control socket from the
 * command line, for operators and tests.  Prints netguard's reply as one
 * JSON object; exits 0 when it says ok, 1 with its reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "netns.h"
#include "ng_client.h"
#include "util.h"

#define DEFAULT_NG_SOCKET	"/run/stockade/netguard.sock"

static int
net_usage(void)
{
	fprintf(stderr,
	    "usage: stockade net attach [--socket PATH] --netns PATH|NAME --policy NAME\n"
	    "                           [--sandbox ID] [--session ID] [--principal P]\n"
	    "       stockade net detach [--socket PATH] (--netns PATH|NAME | --sandbox ID)\n"
	    "       stockade net status [--socket PATH]\n");
	return EXIT_USAGE;
}

/* Sends msg (with nsfd, if any) and prints the reply. */
static int
net_request(const char *sock, json_t *msg, int nsfd)
{
	json_t	*reply;
	char	 err[512];

	if ((reply = ngc_call(sock, msg, nsfd, NGC_TIMEOUT_MS, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		fprintf(stderr, "stockade: netguard: %s\n",
		    json_string_value(json_object_get(reply, "error")) ?
		    json_string_value(json_object_get(reply, "error")) : "refused");
		json_decref(reply);
		return EXIT_NEGATIVE;
	}
	json_dumpf(reply, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(reply);
	return 0;
}

int
cmd_net(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "netns", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'p' },
		{ "sandbox", required_argument, NULL, 'b' },
		{ "session", required_argument, NULL, 's' },
		{ "principal", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*sock = DEFAULT_NG_SOCKET, *netns = NULL, *policy = NULL;
	const char	*sandbox = NULL, *session = NULL, *principal = NULL;
	const char	*sub;
	char		 dflt[64];
	json_t		*msg;
	int		 ch, nsfd = -1, rc;
	dev_t		 dev;
	ino_t		 ino;

	if (argc < 2)
		return net_usage();
	sub = argv[1];
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'S': sock = optarg; break;
		case 'n': netns = optarg; break;
		case 'p': policy = optarg; break;
		case 'b': sandbox = optarg; break;
		case 's': session = optarg; break;
		case 'P': principal = optarg; break;
		default: return net_usage();
		}
	}
	if (optind != argc)
		return net_usage();
	if (netns != NULL && (nsfd = netns_open(netns)) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", netns, errno == EINVAL ?
		    "not a network namespace" : strerror(errno));
		return EXIT_USAGE;
	}
	if (strcmp(sub, "attach") == 0) {
		if (nsfd == -1 || policy == NULL)
			return net_usage();
		/* Without --sandbox, the namespace's identity names it. */
		if (sandbox == NULL && netns_id(nsfd, &dev, &ino) == 0) {
			snprintf(dflt, sizeof(dflt), "netns-%lu",
			    (unsigned long)ino);
			sandbox = dflt;
		}
		msg = json_pack("{s:s, s:s, s:s}", "type", "attach", "policy",
		    policy, "sandbox", sandbox);
		if (session != NULL)
			json_object_set_new(msg, "session_id", json_string(session));
		if (principal != NULL)
			json_object_set_new(msg, "principal",
			    json_string(principal));
	} else if (strcmp(sub, "detach") == 0) {
		if ((nsfd == -1) == (sandbox == NULL))
			return net_usage();
		msg = json_pack("{s:s}", "type", "detach");
		if (sandbox != NULL)
			json_object_set_new(msg, "sandbox", json_string(sandbox));
	} else if (strcmp(sub, "status") == 0) {
		if (nsfd != -1)
			return net_usage();
		msg = json_pack("{s:s}", "type", "status");
	} else
		return net_usage();
	rc = net_request(sock, msg, nsfd);
	json_decref(msg);
	if (nsfd != -1)
		close(nsfd);
	return rc;
}
