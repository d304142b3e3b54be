/*
 * fuzz_net.c: libFuzzer over the RLT_NET parser (net_parse.c). Whatever parses must print in
 * canonical form and parse back to the same conditions, and the canonical form must be a fixed
 * point; whatever fails must fail with one printable line that names RLT_NET.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                                       \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "fuzz_net: " __VA_ARGS__);                             \
			fputc('\n', stderr);                                                   \
			abort();                                                               \
		}                                                                              \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rlt__net_set a, b;
	char value[RLT_VALUE_MAX + 2], text[2 * RLT_RULE_TEXT_MAX], again[2 * RLT_RULE_TEXT_MAX];
	struct rlt_error e;

	if (size > RLT_VALUE_MAX + 1)
		size = RLT_VALUE_MAX + 1;
	memcpy(value, data, size);
	value[size] = '\0';
	memset(&e, 0, sizeof e);
	if (rlt__net_parse(value, &a, &e) != 0) {
		size_t len = strnlen(e.msg, sizeof e.msg);
		CHECK(len < sizeof e.msg && !strncmp(e.msg, "RLT_NET=\"", 9), "bad message: %s", e.msg);
		for (size_t i = 0; i < len; i++)
			CHECK((unsigned char)e.msg[i] >= 0x20 && (unsigned char)e.msg[i] < 0x7f,
			      "unprintable byte in message: %s", e.msg);
		CHECK(a.n == 0, "conditions left after an error");
		return 0;
	}
	for (unsigned i = 0; i < a.n; i++) {
		int n = rlt__net_format(&a.c[i], text, sizeof text);
		CHECK(n > 0 && (size_t)n < sizeof text, "canonical form too long");
		CHECK(rlt__net_parse(text, &b, &e) == 0 && b.n == 1, "\"%s\" does not parse: %s",
		      text, e.msg);
		memcpy(b.c[0].text, a.c[i].text, sizeof b.c[0].text);
		CHECK(memcmp(&a.c[i], &b.c[0], sizeof b.c[0]) == 0, "\"%s\" reads back differently",
		      text);
		rlt__net_format(&b.c[0], again, sizeof again);
		CHECK(strcmp(text, again) == 0, "not a fixed point: %s / %s", text, again);
	}
	return 0;
}
