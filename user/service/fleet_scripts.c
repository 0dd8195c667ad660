// SPDX-License-Identifier: GPL-2.0-only
/* The Lua scripts the fleet sync runs on the Redis server (EVALSHA): the
 * server's clock and Redis's own atomicity do the fleet-wide arithmetic. */
#include "service/fleet.h"

/* KEYS[1]: the key's fleet state (its GCRA TAT, microseconds of the server's
 * clock). ARGV: T and tau in microseconds, and the admissions to add. The
 * hosts have admitted them already, so they are always added; the answer is
 * how long (µs) the key must be held until one more unit conforms, or 0. */
const char fg_fleet_rate_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local T, tau, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])\n"
	"local tat = tonumber(redis.call('GET', KEYS[1])) or 0\n"
	"if tat < now then tat = now end\n"
	"tat = tat + cost * T\n"
	"redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX',\n"
	"           math.floor((tat - now) / 1000) + 1000)\n"
	"local hold = tat - tau + T - now\n"
	"if hold > 0 then return math.ceil(hold) end\n"
	"return 0\n";

/* The fleet's bans. KEYS[1]: the sorted set of bans, member "ADDR/LEN",
 * score its end (µs of the server's clock, inf = until unbanned);
 * KEYS[2]: the change log, a stream of the members whose ban was set,
 * lengthened or lifted, trimmed to about 200,000 entries. ARGV[1] says
 * what to do (times left in µs: -1 until unbanned, 0 lifted):
 *   push MEMBER LEFT...  sets and lifts this host's bans; returns how many;
 *   pull LAST COUNT      the changes after entry LAST of the log (""
 *                        at first): {gap, last entry, MEMBER, LEFT...};
 *                        gap "1" when entries were lost since LAST;
 *   scan CURSOR COUNT    a page of the whole set: {next cursor, MEMBER,
 *                        LEFT...}, cursor "0" at the end. */
const char fg_fleet_bans_script[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
	"local function left(score)\n"
	"  if not score then return '0' end\n"
	"  score = tonumber(score)\n"
	"  if score == math.huge then return '-1' end\n"
	"  if score <= now then return '0' end\n"
	"  return string.format('%.0f', score - now)\n"
	"end\n"
	"if ARGV[1] == 'push' then\n"
	"  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"  for i = 2, #ARGV - 1, 2 do\n"
	"    local l, changed = tonumber(ARGV[i + 1])\n"
	"    if l == 0 then changed = redis.call('ZREM', KEYS[1], ARGV[i])\n"
	"    elseif l < 0 then changed = redis.call('ZADD', KEYS[1], 'GT', 'CH', '+inf', ARGV[i])\n"
	"    else changed = redis.call('ZADD', KEYS[1], 'GT', 'CH',\n"
	"                              string.format('%.0f', now + l), ARGV[i]) end\n"
	"    if changed > 0 then\n"
	"      redis.call('XADD', KEYS[2], 'MAXLEN', '~', '200000', '*', 'm', ARGV[i])\n"
	"    end\n"
	"  end\n"
	"  return (#ARGV - 1) / 2\n"
	"end\n"
	"if ARGV[1] == 'pull' then\n"
	"  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]\n"
	"  local at_end = {'1', last and last[1] or '0-0'}\n"
	"  if ARGV[2] == '' then return at_end end\n"
	"  if ARGV[2] ~= '0-0' and #redis.call('XRANGE', KEYS[2], ARGV[2], ARGV[2]) == 0 then\n"
	"    return at_end\n"
	"  end\n"
	"  local out = {'0', ARGV[2]}\n"
	"  for _, e in ipairs(redis.call('XRANGE', KEYS[2], '(' .. ARGV[2], '+', 'COUNT',\n"
	"                                tonumber(ARGV[3]))) do\n"
	"    out[2] = e[1]\n"
	"    local m = e[2][2]\n"
	"    if type(m) == 'string' then\n"
	"      out[#out + 1] = m\n"
	"      out[#out + 1] = left(redis.call('ZSCORE', KEYS[1], m))\n"
	"    end\n"
	"  end\n"
	"  return out\n"
	"end\n"
	"local r = redis.call('ZSCAN', KEYS[1], ARGV[2], 'COUNT', tonumber(ARGV[3]))\n"
	"local out = {r[1]}\n"
	"for i = 1, #r[2] - 1, 2 do\n"
	"  out[#out + 1] = r[2][i]\n"
	"  out[#out + 1] = left(r[2][i + 1])\n"
	"end\n"
	"return out\n";
