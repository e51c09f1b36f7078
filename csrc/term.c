/*
 * term.c: vkit.term, the terminal primitives behind `vkit repl`.
 *
 *   isatty(fd)                 -> boolean
 *   readline(prompt)           -> line | nil at end of input | false when
 *                                 Ctrl-C cancelled the line
 *   add_history(line [, path])  -- path: also appended to that file now
 *   read_history(path), write_history(path [, max])
 *   set_completer(fn)          -- fn(word) -> array of candidate words
 *   pcall_interruptible(f, ...) -> true, ... | false, traceback (a string
 *                                 error) or the error object itself
 *                                 (Ctrl-C while f runs raises "interrupted!")
 *
 * GNU readline's callbacks carry no user pointer, so the Lua state in use is
 * kept in one static for the duration of a readline or interruptible call;
 * that is the only process-wide state, and it is cleared on return.
 */
#include "vkit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#define COMPLETER_KEY "vkit.term.completer"

static lua_State *active_L;
static volatile sig_atomic_t got_sigint;
static char *finished_line;
static int line_finished;

static int term_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

static void on_line(char *line) {
  finished_line = line;
  line_finished = 1;
  rl_callback_handler_remove();
}

/* One SIGINT handler for the whole session, installed by the first
 * readline or interruptible call and kept (without SA_RESTART, so a
 * blocking call sees EINTR): while a chunk runs, the first Ctrl-C stops it
 * (vkit_interrupt_requested, the stop hook) and a second one kills the
 * process; otherwise it is remembered in got_sigint: readline cancels its
 * line, and a chunk about to start (Ctrl-C right after Enter) starts
 * interrupted.  Before, the REPL's own code between the two ran with the
 * default disposition, where a Ctrl-C killed it. */
static volatile sig_atomic_t running_chunk;
static void stop_hook(lua_State *L, lua_Debug *ar);

static void on_sigint(int sig) {
  if (running_chunk) {
    if (vkit_interrupt_requested) {
      signal(sig, SIG_DFL);
      raise(sig);
      return;
    }
    vkit_interrupt_requested = 1;
    if (active_L) lua_sethook(active_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    return;
  }
  got_sigint = 1;
}

static void install_sigint(void) {
  static int installed;
  if (installed) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  installed = 1;
}

/* ---- completion -------------------------------------------------------- */

static char **candidates;
static size_t ncandidates, next_candidate;

static void clear_candidates(void) {
  for (size_t i = next_candidate; i < ncandidates; i++) free(candidates[i]);
  free(candidates);
  candidates = NULL;
  ncandidates = next_candidate = 0;
}

/* Asks the Lua completer for the words that complete `text`. */
static void collect_candidates(const char *text) {
  clear_candidates();
  lua_State *L = active_L;
  if (!L) return;
  if (lua_getfield(L, LUA_REGISTRYINDEX, COMPLETER_KEY) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushstring(L, text);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  size_t n = (size_t)lua_rawlen(L, -1);
  candidates = calloc(n ? n : 1, sizeof *candidates);
  for (size_t i = 0; candidates && i < n; i++) {
    lua_rawgeti(L, -1, (lua_Integer)i + 1);
    const char *s = lua_tostring(L, -1);
    if (s) candidates[ncandidates++] = strdup(s);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static char *generator(const char *text, int state) {
  if (state == 0) collect_candidates(text);
  if (next_candidate < ncandidates) return candidates[next_candidate++]; /* readline frees it */
  return NULL;
}

static char **attempt_completion(const char *text, int start, int end) {
  (void)start;
  (void)end;
  rl_attempted_completion_over = 1; /* never fall back to file names */
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, generator);
}

static int term_set_completer(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, COMPLETER_KEY);
  return 0;
}

/* ---- line input -------------------------------------------------------- */

static int term_readline(lua_State *L) {
  const char *prompt = luaL_optstring(L, 1, "> ");
  install_sigint();
  rl_catch_signals = 0;
  rl_readline_name = "vkit";
  /* Not [ ] " ': a word may index a table (r.attempts[1].rec, t["k"].x). */
  rl_completer_word_break_characters = " \t\n`@$><=;|&{(,+-*/%^~#";
  rl_attempted_completion_function = attempt_completion;
  active_L = L;
  got_sigint = 0;
  line_finished = 0;
  finished_line = NULL;
  rl_callback_handler_install(prompt, on_line);
  int cancelled = 0;
  /* SIGINT stays blocked except inside pselect(), which unblocks it
   * atomically: a Ctrl-C that arrives while readline handles a key is seen
   * at the next pselect (pending), never lost until the key after it. */
  sigset_t block, original, waiting;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &original);
  waiting = original;
  sigdelset(&waiting, SIGINT);
  while (!line_finished) {
    int in = fileno(rl_instream ? rl_instream : stdin);
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(in, &fds);
    int r = got_sigint ? -1 : pselect(in + 1, &fds, NULL, NULL, NULL, &waiting);
    if (got_sigint || (r < 0 && errno == EINTR)) {
      if (got_sigint) {
        rl_free_line_state();
        rl_callback_sigcleanup();
        rl_replace_line("", 0);
        rl_crlf();
        rl_callback_handler_remove();
        cancelled = 1;
        break;
      }
      continue;
    }
    if (r < 0) break;
    rl_callback_read_char();
  }
  sigprocmask(SIG_SETMASK, &original, NULL);
  active_L = NULL;
  clear_candidates();
  if (cancelled) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (!finished_line) return 0;
  lua_pushstring(L, finished_line);
  free(finished_line);
  return 1;
}

static int term_add_history(lua_State *L) {
  const char *line = luaL_checkstring(L, 1);
  const char *path = luaL_optstring(L, 2, NULL);
  add_history(line);
  if (path) {
    /* append_history() wants the file to exist. */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return vkit_fail_errno(L, errno, path);
    close(fd);
    int err = append_history(1, path);
    if (err) return vkit_fail_errno(L, err, path);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int term_read_history(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int err = read_history(path);
  if (err) return vkit_fail_errno(L, err, path);
  lua_pushboolean(L, 1);
  return 1;
}

static int term_write_history(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int err = write_history(path);
  if (!err && !lua_isnoneornil(L, 2)) err = history_truncate_file(path, (int)luaL_checkinteger(L, 2));
  if (err) return vkit_fail_errno(L, err, path);
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- interruptible calls (after lua.c's laction/lstop) ----------------- */

static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}


/* A string error gets a traceback; any other error object is handed back
 * as it is, for the REPL to print. */
static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg || lua_type(L, 1) != LUA_TSTRING) return 1;
  luaL_traceback(L, L, msg, 1);
  return 1;
}

static int term_pcall_interruptible(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  int nargs = lua_gettop(L) - 1;
  lua_pushcfunction(L, traceback);
  lua_insert(L, 1);
  install_sigint();
  active_L = L;
  vkit_interrupt_requested = 0;
  running_chunk = 1;
  if (got_sigint) { /* Ctrl-C after Enter, before the chunk started */
    got_sigint = 0;
    vkit_interrupt_requested = 1;
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  }
  int status = lua_pcall(L, nargs, LUA_MULTRET, 1);
  running_chunk = 0;
  lua_sethook(L, NULL, 0, 0);
  vkit_interrupt_requested = 0;
  active_L = NULL;
  lua_pushboolean(L, status == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

static const luaL_Reg term_funcs[] = {
  {"isatty", term_isatty},
  {"readline", term_readline},
  {"add_history", term_add_history},
  {"read_history", term_read_history},
  {"write_history", term_write_history},
  {"set_completer", term_set_completer},
  {"pcall_interruptible", term_pcall_interruptible},
  {NULL, NULL}};

/* term.c builds vkit_term.so (see the Makefile), compiled with
 * -fvisibility=hidden: this is its one exported symbol. */
__attribute__((visibility("default"))) int luaopen_vkit_term(lua_State *L);
int luaopen_vkit_term(lua_State *L) {
  luaL_newlib(L, term_funcs);
  return 1;
}
