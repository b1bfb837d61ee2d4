/*
 * Fuzz target for evidence bundles as `verify --bundle` reads them: the
 * input is a tar, untrusted; it is unpacked by bundle_tar_extract (only
 * regular files and folders beneath one top folder) into a scratch folder,
 * then the MANIFEST, bundle.json, the chain and all the bundle derives
 * from it are checked with the bundle's own key.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "log.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 dir[] = "/tmp/stockade-fuzz-bundle.XXXXXX";
	char	 tar[PATH_MAX], out[PATH_MAX], msg[PATH_MAX + 512], warn[512];
	FILE	*fp;

	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp");
	if (xsnprintf(tar, sizeof(tar), "%s/in.tar", dir) == -1 ||
	    xsnprintf(out, sizeof(out), "%s/b", dir) == -1 ||
	    (fp = fopen(tar, "w")) == NULL)
		fatal("%s", dir);
	if (size > 0 && fwrite(data, 1, size, fp) != size)
		fatal("%s", tar);
	fclose(fp);
	if (mkdir(out, 0700) == -1)
		fatal("%s", out);
	if (bundle_tar_extract(tar, out, msg, sizeof(msg)) == 0)
		(void)(bundle_is_fleet(out) ? bundle_verify_fleet(out, NULL, 0,
		    msg, sizeof(msg), warn, sizeof(warn)) : bundle_verify(out,
		    NULL, msg, sizeof(msg), warn, sizeof(warn)));
	(void)rmtree(dir);
	return 0;
}
