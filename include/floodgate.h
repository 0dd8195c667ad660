/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every structure that crosses the kernel/user boundary, shared byte for
 * byte by the BPF programs (bpf/) and the control plane (user/, tests/).
 *
 * Byte order: fields named *_be and the address bytes are in network byte
 * order, exactly as they appear in the packet; everything else is host order.
 * All structs have explicit padding so BTF, bpftool and both compilers agree.
 */
#ifndef FLOODGATE_H
#define FLOODGATE_H

/*
 * One part per feature; a part includes the parts it builds on. The
 * sizes each part asserts are those both compilers must agree on: a
 * change there changes a map's key or value size, which `reload` checks
 * against the pinned maps (and `upgrade` carries across).
 */
#include "floodgate_policy.h"
#include "floodgate_state.h"
#include "floodgate_lists.h"
#include "floodgate_runtime.h"
#include "floodgate_fleet.h"
#include "floodgate_stats.h"
#include "floodgate_events.h"
#include "floodgate_synproxy.h"

#endif /* FLOODGATE_H */
