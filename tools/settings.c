/* SPDX-License-Identifier: BSD-3-Clause */
/* mpix-settings: every setting mpix reads, with its environment variable, the objects
 * whose info carries it, its values, default and audience, and the value the
 * environment puts in force now. `--markdown [MODULE]` prints the tables of the
 * documentation (tests/common/settings_docs.sh keeps them equal). Calls no MPI. */
#include "common/hint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void markdown_row_text(const char *text)
{
    for (; *text; text++) {
        if (*text == '|')
            fputs("\\|", stdout);
        else
            putchar(*text);
    }
}

static void print_markdown(const char *module)
{
    printf("| setting | environment | info of | values | default | for | what it does |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        const mpix_hint_spec *spec = mpix_hint_spec_of((mpix_hint_id)id);
        char expected[256];
        if (module && strcmp(spec->module, module) != 0)
            continue;
        mpix_hint_describe(spec, expected, sizeof expected);
        printf("| `%s` | %s%s%s | ", spec->key, spec->env ? "`" : "", spec->env ? spec->env : "—", spec->env ? "`" : "");
        markdown_row_text(spec->info_objects ? spec->info_objects : "— (environment only)");
        printf(" | ");
        markdown_row_text(expected);
        printf(" | %s%s%s | %s | ", spec->default_value ? "`" : "", spec->default_value ? spec->default_value : "see text",
               spec->default_value ? "`" : "", spec->audience == MPIX_HINT_FOR_TESTING ? "testing" : "users");
        markdown_row_text(spec->description);
        printf(" |\n");
    }
}

/* Plain listing with the value the environment puts in force; exit status 1 if an
 * environment variable holds a malformed value. */
static int print_in_force(void)
{
    int malformed = 0;
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        const mpix_hint_spec *spec = mpix_hint_spec_of((mpix_hint_id)id);
        const char *env_value = mpix_hint_env(spec);
        mpix_hint_value value;
        char expected[256];
        mpix_hint_describe(spec, expected, sizeof expected);
        printf("%-28s %-7s %-7s ", spec->key, spec->module, spec->audience == MPIX_HINT_FOR_TESTING ? "testing" : "user");
        if (env_value && !mpix_hint_parse(spec, env_value, &value)) {
            printf("%s='%s' is malformed: expected %s\n", spec->env, env_value, expected);
            malformed = 1;
        } else if (env_value) {
            printf("%s (from %s)\n", env_value, spec->env);
        } else {
            printf("%s (default)\n", spec->default_value ? spec->default_value : "not set");
        }
        printf("%-28s %s\n", "", spec->description);
    }
    return malformed;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--markdown") == 0) {
        print_markdown(argc >= 3 ? argv[2] : NULL);
        return 0;
    }
    if (argc >= 2) {
        fprintf(stderr, "usage: %s [--markdown [MODULE]]\n", argv[0]);
        return 2;
    }
    return print_in_force();
}
