/* SPDX-License-Identifier: BSD-3-Clause */
#include "hint.h"
#include "error.h"
#include "verbose.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of @word (length @length) among the '|'-separated @keywords, or -1. */
static int keyword_index(const char *keywords, const char *word, size_t length)
{
    int index = 0;
    for (const char *start = keywords; start && *start; index++) {
        const char *end = strchr(start, '|');
        size_t keyword_length = end ? (size_t)(end - start) : strlen(start);
        if (keyword_length == length && strncmp(start, word, length) == 0)
            return index;
        start = end ? end + 1 : NULL;
    }
    return -1;
}

void mpix_hint_describe(const mpix_hint_spec *spec, char *text, size_t size)
{
    const char *keywords = spec->keywords ? spec->keywords : "";
    const char *or_keywords = spec->keywords ? " or " : "";
    switch (spec->type) {
    case MPIX_HINT_TYPE_BOOL: snprintf(text, size, "true or false"); break;
    case MPIX_HINT_TYPE_KEYWORD: snprintf(text, size, "one of %s", keywords); break;
    case MPIX_HINT_TYPE_NUMBER:
        snprintf(text, size, "a number in [%g, %g]%s%s", spec->min, spec->max, or_keywords, keywords);
        break;
    case MPIX_HINT_TYPE_INTEGER:
        snprintf(text, size, "an integer in [%.0f, %.0f]%s%s", spec->min, spec->max, or_keywords, keywords);
        break;
    case MPIX_HINT_TYPE_MODE:
        snprintf(text, size, "permission bits at most 0777: octal with a leading 0 (0640) or the decimal number of the "
                             "mode (416)");
        break;
    case MPIX_HINT_TYPE_STRING: snprintf(text, size, "a non-empty string"); break;
    case MPIX_HINT_TYPE_KEYWORD_LIST: snprintf(text, size, "a comma-separated list of %s", keywords); break;
    }
}

static int bad_value(const mpix_hint_spec *spec, const mpix_hint_value *value)
{
    char expected[256];
    mpix_hint_describe(spec, expected, sizeof expected);
    return mpix_error(MPIX_ERRKIND_BAD_HINT, "invalid value '%.64s' for hint '%s' (%s): expected %s",
                      value->text, spec->key, value->origin, expected);
}

static int parse_keyword_list(const mpix_hint_spec *spec, mpix_hint_value *value)
{
    const char *word = value->text;
    value->keyword_mask = 0;
    while (*word) {
        size_t length = strcspn(word, ",");
        while (length && word[0] == ' ')
            word++, length--;
        size_t trimmed = length;
        while (trimmed && word[trimmed - 1] == ' ')
            trimmed--;
        int index = keyword_index(spec->keywords, word, trimmed);
        if (index < 0)
            return 0;
        value->keyword_mask |= 1u << index;
        word += length;
        if (*word == ',')
            word++;
    }
    return value->keyword_mask != 0;
}

/* 1 if value->text is well formed for @spec; fills the typed fields. */
static int parse(const mpix_hint_spec *spec, mpix_hint_value *value)
{
    const char *text = value->text;
    char *end = NULL;

    value->keyword = keyword_index(spec->keywords, text, strlen(text));
    switch (spec->type) {
    case MPIX_HINT_TYPE_BOOL:
        value->keyword = keyword_index("false|true|0|1|no|yes|off|on", text, strlen(text));
        value->integer = value->keyword & 1;
        return value->keyword >= 0;
    case MPIX_HINT_TYPE_KEYWORD:
        return value->keyword >= 0;
    case MPIX_HINT_TYPE_NUMBER:
    case MPIX_HINT_TYPE_INTEGER:
        if (value->keyword >= 0)
            return 1;
        errno = 0;
        if (spec->type == MPIX_HINT_TYPE_NUMBER) {
            value->number = strtod(text, &end);
            value->integer = (long long)value->number;
        } else {
            value->integer = strtoll(text, &end, 10);
            value->number = (double)value->integer;
        }
        return end != text && *end == '\0' && errno == 0 && isfinite(value->number) &&
               value->number >= spec->min && value->number <= spec->max;
    case MPIX_HINT_TYPE_MODE:
        /* C's and chmod's octal (0640), or the decimal number a program prints with %d
         * (S_IRUSR | S_IWUSR is "384"), as MPI-IO implementations and the storage-window
         * programs before mpix pass it. */
        errno = 0;
        value->integer = strtoll(text, &end, text[0] == '0' ? 8 : 10);
        return isdigit((unsigned char)text[0]) && *end == '\0' && errno == 0 && value->integer >= 0 &&
               value->integer <= 0777;
    case MPIX_HINT_TYPE_STRING:
        return text[0] != '\0';
    case MPIX_HINT_TYPE_KEYWORD_LIST:
        return parse_keyword_list(spec, value);
    }
    return 0;
}

int mpix_hint_parse(const mpix_hint_spec *spec, const char *text, mpix_hint_value *value)
{
    memset(value, 0, sizeof *value);
    value->keyword = -1;
    snprintf(value->text, sizeof value->text, "%s", text);
    return parse(spec, value);
}

/* The table's defaults, parsed once for the process: they never change, and objects
 * read their settings at every creation (a communicator's first zcopy call reads seven).
 * Only their typed fields are kept (the text is the table's): a whole value for each
 * would be pages of memory touched for the first time in a process's first call. */
typedef struct parsed_default {
    int has_value, keyword;
    unsigned keyword_mask;
    long long integer;
    double number;
} parsed_default;
static parsed_default parsed_defaults[MPIX_HINT_COUNT];
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static void parse_defaults(void)
{
    mpix_hint_value value;
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        const mpix_hint_spec *spec = mpix_hint_spec_of((mpix_hint_id)id);
        parsed_default *parsed = &parsed_defaults[id];
        parsed->keyword = -1;
        if (spec->default_value) /* well formed: tests/common checks every one */
            *parsed = (parsed_default){ .has_value = mpix_hint_parse(spec, spec->default_value, &value),
                                        .keyword = value.keyword,
                                        .keyword_mask = value.keyword_mask,
                                        .integer = value.integer,
                                        .number = value.number };
    }
}

/* Only the fields a lookup fills: the value is large (its text holds MPI_MAX_INFO_VAL
 * bytes, 1 KiB with MPICH). */
static void clear_value(mpix_hint_value *value)
{
    value->present = value->has_value = 0;
    value->keyword = -1;
    value->keyword_mask = 0;
    value->integer = 0;
    value->number = 0;
    value->text[0] = '\0';
    value->origin[0] = '\0';
}

const char *mpix_hint_env(const mpix_hint_spec *spec)
{
    const char *value = spec->env ? getenv(spec->env) : NULL;
    return value && value[0] ? value : NULL;
}

int mpix_hint_get(MPI_Info info, mpix_hint_id id, mpix_hint_value *value)
{
    const mpix_hint_spec *spec = mpix_hint_spec_of(id);
    int found = 0;

    clear_value(value);
    if (info != MPI_INFO_NULL && spec->info_objects) {
        int rc = PMPI_Info_get(info, spec->key, MPI_MAX_INFO_VAL, value->text, &found);
        if (rc != MPI_SUCCESS)
            return rc;
        snprintf(value->origin, sizeof value->origin, "info");
    }
    if (!found) {
        const char *env_value = mpix_hint_env(spec);
        if (env_value) {
            found = 1;
            snprintf(value->text, sizeof value->text, "%s", env_value);
            snprintf(value->origin, sizeof value->origin, "environment variable %s", spec->env);
        }
    }
    if (found) {
        value->present = 1;
        if (!parse(spec, value))
            return bad_value(spec, value);
        value->has_value = 1;
        return MPI_SUCCESS;
    }
    pthread_once(&defaults_once, parse_defaults);
    const parsed_default *parsed = &parsed_defaults[id];
    value->has_value = parsed->has_value;
    value->keyword = parsed->keyword;
    value->keyword_mask = parsed->keyword_mask;
    value->integer = parsed->integer;
    value->number = parsed->number;
    if (spec->default_value) {
        snprintf(value->text, sizeof value->text, "%s", spec->default_value);
        strcpy(value->origin, "default");
    }
    return MPI_SUCCESS;
}

int mpix_hint_bool(MPI_Info info, mpix_hint_id id, int *result)
{
    mpix_hint_value value;
    int rc = mpix_hint_get(info, id, &value);
    *result = value.has_value ? (int)value.integer : 0;
    return rc;
}

int mpix_hint_integer(MPI_Info info, mpix_hint_id id, long long *result)
{
    mpix_hint_value value;
    int rc = mpix_hint_get(info, id, &value);
    *result = value.has_value ? value.integer : 0;
    return rc;
}

int mpix_hint_keyword(MPI_Info info, mpix_hint_id id, int *result)
{
    mpix_hint_value value;
    int rc = mpix_hint_get(info, id, &value);
    *result = value.has_value ? value.keyword : 0;
    return rc;
}

void mpix_hint_report(MPI_Info info, const char *module)
{
    if (!mpix_verbose_enabled(info))
        return;
    for (int id = 0; id < MPIX_HINT_COUNT; id++) {
        const mpix_hint_spec *spec = mpix_hint_spec_of((mpix_hint_id)id);
        mpix_hint_value value;
        if (strcmp(spec->module, module) != 0)
            continue;
        if (mpix_hint_get(info, (mpix_hint_id)id, &value) != MPI_SUCCESS)
            continue; /* the call that reads it reports the bad value */
        if (value.has_value)
            mpix_verbose_print(module, "setting %s=%s (%s)", spec->key, value.text, value.origin);
        else
            mpix_verbose_print(module, "setting %s not set", spec->key);
    }
}
