/* fstab-diff.h: the edit of fstab shown to the operator as `diff -u` would show it, lines paired by
 * position (an edit of fstab.h never adds or removes a line). */
#pragma once

#include <stddef.h>

/* A unified diff (like `diff -u`, 3 lines of context, hunk headers "@@ -a,b +c,d @@", ",b" left out when b
 * is 1 as diff does) of two texts, with the header lines "--- OLD_LABEL" and "+++ NEW_LABEL". Empty string
 * (not NULL) when the texts are equal. A last line without a newline is followed by
 * "\ No newline at end of file". Lines are compared by position, which is exact for fstab_edit() output
 * since it never adds or removes lines. */
int fstab_diff(const char *old_text, size_t old_len, const char *new_text, size_t new_len, const char *old_label,
               const char *new_label, char **ret);
