/* reply-cache.h: the replies of GetStatus and GetRecommendations of every
 * mount, which monitoring polls: each kind (a status, one per history_s
 * served, the advice as told to anyone and as told to the privileged) is
 * built once and served as its text until reply_cache_changed() or the
 * second of uptime turns. A build that takes the loop long is made again
 * in slices between other events (reply-cache.c says when), its time
 * charged to the caller that asked for it. It owns its texts, its builds
 * and the calls waiting for them; it reads the view, and a build in
 * slices whose view turned a generation meanwhile starts over. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "control.h"
#include "macro.h"
#include "view.h"

typedef struct ReplyCache ReplyCache;
/* 'view' must outlive the cache and every call answered later. */
int reply_cache_new(const View *view, ReplyCache **ret);
/* Builds that take the loop long go on in slices on 'e'; without it,
 * every reply is built at once. */
int reply_cache_set_event(ReplyCache *m, sd_event *e);
/* Charges 'usec' of the loop's time spent building, later and in slices,
 * a reply that the call of 'peer' asked for. */
typedef void (*reply_cache_charge_t)(void *userdata, const ControlPeer *peer, uint64_t usec);
void reply_cache_set_charge(ReplyCache *m, reply_cache_charge_t charge, void *userdata);
/* The calls still waiting are dropped unanswered. */
ReplyCache *reply_cache_free(ReplyCache *m);
/* Something a reply shows changed: the next call builds it afresh (one
 * that takes the loop long, in slices, the last text served meanwhile
 * while it is at most a second old). */
void reply_cache_changed(ReplyCache *m);

/* GetStatus of every mount with history_s of history (0: none; one of
 * status_reply_span()'s values), and GetRecommendations of every mount as
 * told to a caller 'privileged' or not: 0 with the reply in *ret, or 1
 * when the call is answered later, when the build is done; -ENOMEM. */
int reply_cache_status(ReplyCache *m, ControlCall *call, int64_t history_s, json_object **ret);
int reply_cache_advice(ReplyCache *m, ControlCall *call, bool privileged, json_object **ret);
