/* budget.h - the memory budget of a call: bodies, decoded documents and replies charged to --memory-budget. */
#ifndef IKD_BUDGET_H
#define IKD_BUDGET_H

#include "call.h"

/* Charge `n` bytes to the call; 0 when that would pass the budget (unless
 * `force`: a reply that is already built). */
int ikd_budget_charge(ikd_call *c, size_t n, int force);
void ikd_budget_release(ikd_call *c, size_t n);
/* What the decoded document of an n-byte body of this call is charged as. */
size_t ikd_budget_decode_estimate(const ikd_call *c, size_t n);
/* Charge a body of n bytes' decoded document: 1, else the answer is set
 * (413 when it could never fit, 503 when it does not fit now). */
int ikd_budget_charge_decode(ikd_call *c, size_t n);
/* An import that may be a GLB: its decode charged now, on the worker (1),
 * else the answer is set. */
int ikd_budget_charge_late(ikd_call *c);
/* The decoded document is freed: its charge goes (and a big one's memory
 * back to the system). */
void ikd_budget_decoded(ikd_call *c);
/* The answers: 503 (the budget is in use now), 413 (a body of n bytes and
 * its document, est bytes, could never fit; est 0: not known yet). */
ikd_call_next ikd_budget_over(ikd_call *c, size_t want);
ikd_call_next ikd_budget_never_fits(ikd_call *c, size_t n, size_t est);
/* A reply of about est bytes, charged before solving: 1, else the answer
 * is set (413 on `field`, with `hint` on what to send instead, when it
 * could never fit; 503 when it does not fit now). */
int ikd_budget_charge_reply(ikd_call *c, size_t est, const char *field, const char *hint);
/* ikd_clip_reserve's hook (ctx: the call): the tree of a clip's members
 * other than frames, charged before they are parsed. */
int ikd_budget_clip_reserve(void *ctx, size_t body_bytes, ikd_error *err);
/* The body's limit on the call's route, and the flag that sets it. */
long ikd_budget_body_limit(const ikd_call *c);
const char *ikd_budget_body_flag(const ikd_call *c);

#endif
