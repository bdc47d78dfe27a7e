/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What Legion Prof's two viewers show of a provenance in a popup, written
 * from their code at legion-25.06.0: the new viewer
 * (tools/legion_prof_rs/src/backend/data_source.rs, parse_provenance) shows
 * one "key: value" line per member of ["human", {...}], in key order
 * (serde_json's map), else the text; the legacy HTML viewer
 * (tools/legion_prof_files/js/timeline.js, getMouseOver) splits the text
 * on '$' and, when that gives two parts, shows "k: v" for each '|' piece
 * of the second split on ',' (its first two parts), drawn upwards, so
 * that the last piece is the top line, else "Provenance: text". Lines are
 * in the order a user reads them, top to bottom.
 */
#ifndef OPTRACE_LEGION_POPUP_H
#define OPTRACE_LEGION_POPUP_H

#define LEGION_POPUP_LINE 512
#define LEGION_POPUP_LINES 64

struct legion_popup {
	char lines[LEGION_POPUP_LINES][LEGION_POPUP_LINE];
	int count;
};

/* The new viewer's provenance lines. */
void legion_popup_viewer(const char *provenance, struct legion_popup *popup);
/* The legacy viewer's provenance lines. */
void legion_popup_legacy(const char *provenance, struct legion_popup *popup);
/* The value of "key: value" among the lines, or NULL. */
const char *legion_popup_value(const struct legion_popup *popup, const char *key);
/*
 * The human part of ["human$k,v|...", {...}] (before its '$'), which the
 * viewers drop and optrace fills with the op's one-line title; "" if none.
 */
void legion_popup_human(const char *provenance, char *human, unsigned int size);
/* The widest line, in characters (code points). */
int legion_popup_width(const struct legion_popup *popup);

#endif /* OPTRACE_LEGION_POPUP_H */
