/* redis_scripts.h: the Lua scripts of a redis:// scope (redis_scripts.c: their contract). */
#ifndef RLT_REDIS_SCRIPTS_H
#define RLT_REDIS_SCRIPTS_H

/* Token and leaky bucket (GCRA), fixed window, sliding window, sliding log. */
extern const char rlt__redis_lua_gcra[];
extern const char rlt__redis_lua_fixed[];
extern const char rlt__redis_lua_sliding[];
extern const char rlt__redis_lua_log[];

#endif
