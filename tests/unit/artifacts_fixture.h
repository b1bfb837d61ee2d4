/*
 * Shared by the check_artifacts*.c tests: the first bytes of a PNG, which
 * artifact_sniff takes for an image.
 */
#ifndef STOCKADE_ARTIFACTS_FIXTURE_H
#define STOCKADE_ARTIFACTS_FIXTURE_H

#define PNG_HEAD	"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"

#endif /* STOCKADE_ARTIFACTS_FIXTURE_H */
