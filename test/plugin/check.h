/*****************************************************************************\
 *  check.h - CHECK() for the C test programs of test/plugin: a failed
 *  condition is printed with its place and counted in `failures` (one
 *  per program: include this once, in the file with main()).
\*****************************************************************************/

#ifndef RLSCHED_TEST_CHECK_H
#define RLSCHED_TEST_CHECK_H

#include <stdio.h>

static int failures = 0;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			failures++;					\
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ",	\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fprintf(stderr, "\n");				\
		}							\
	} while (0)

#endif
