--- The PostgreSQL store's roles and the guards that keep its history
-- true, whoever connects (schema migration 3).
--
-- Roles (group roles, NOLOGIN; give each machine a login role in one):
--   vkit_submitters  read every run; queue a run (created queued, nothing
--                    else); request a cancellation; cancel a queued run
--   vkit_workers     read every run; claim a run (a new attempt under a
--                    lease bound to the claiming login); renew, publish
--                    progress, retain files and record the end of an
--                    attempt only while that login holds its live lease,
--                    and only once; settle a run whose lease lapsed
--   vkit_client      both (its members keep working after the upgrade; a
--                    machine that queues jobs and runs them on demand)
-- Column grants are the first layer: a submitter cannot name an attempt,
-- an outcome or a lease at all, and a worker cannot insert a run.
--
-- Triggers are the second, and the one that holds the rule: a run moves
-- only along queued -> running -> done|failed|cancelled, each step checked
-- against the row before and after it and the role and login sending it,
-- and a finished run, an ended attempt and a retained file never change.
-- Triggers rather than row-level security because the rules are
-- transitions (OLD against NEW, and the run's end against its attempt's
-- row), which a policy cannot express (it sees the old row and the new
-- one separately); because a policy hides what it refuses (the UPDATE
-- succeeds on no rows, so a forger and a worker whose lease was lost both
-- hear "done"), where a trigger names the rule it refused; and because
-- they bind the table's owner too (a policy does not, unless forced).
-- Neither stops the owner, who can disable them: the owner can forge
-- history (docs/deployment.md).
--
-- The lease is bound to session_user, the login that claimed: a worker
-- reads every other's lease token (SELECT on vkit.runs), so the token
-- alone proves nothing.  session_user, unlike current_user, does not
-- change with SET ROLE.
--
-- SQLSTATEs: P0001 a finished run, an ended attempt or a retained file
-- cannot change; VK001 the lease is not held (live, by this login);
-- VK002 not a step of a run's life; 42501 the role may not take this step.
local policy = require("vkit.policy").store

local M = {}

M.LEASE_NOT_HELD = "VK001"
M.NOT_A_STEP = "VK002"
M.SUBMITTERS = "vkit_submitters"
M.WORKERS = "vkit_workers"

-- A lease can be asked for at most max_lease_seconds ahead (a worker
-- cannot keep a run from the others for ever).  The bound is the policy's
-- when the store was migrated.
local MAX_LEASE = ("make_interval(secs => %d)"):format(policy.max_lease_seconds)

local ROLES = {
  [[DO $$ BEGIN CREATE ROLE vkit_submitters NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$]],
  [[DO $$ BEGIN CREATE ROLE vkit_workers NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$]],
  -- vkit_client's own grants go: it holds what both roles hold, as a member.
  [[REVOKE ALL ON vkit.runs, vkit.attempts, vkit.artifacts, vkit.settings, vkit.schema_version FROM vkit_client]],
  [[REVOKE ALL ON SEQUENCE vkit.runs_seq_seq FROM vkit_client]],
  [[REVOKE ALL ON SCHEMA vkit FROM vkit_client]],
  [[GRANT vkit_submitters, vkit_workers TO vkit_client]],
  [[GRANT USAGE ON SCHEMA vkit TO vkit_submitters, vkit_workers]],
  [[GRANT SELECT ON vkit.runs, vkit.attempts, vkit.artifacts, vkit.settings, vkit.schema_version
      TO vkit_submitters, vkit_workers]],
  [[GRANT INSERT (run_id, kind, job, status, created_at, updated_at) ON vkit.runs TO vkit_submitters]],
  [[GRANT USAGE ON SEQUENCE vkit.runs_seq_seq TO vkit_submitters]],
  [[GRANT UPDATE (cancel_requested, status, error, updated_at) ON vkit.runs TO vkit_submitters]],
  [[GRANT UPDATE (status, attempts, outcome, summary, error, lease_token, lease_owner, lease_expires_at, worker_pid,
      updated_at) ON vkit.runs TO vkit_workers]],
  [[GRANT INSERT (run_id, attempt, status, worker, worker_pid, lease_token, started_at) ON vkit.attempts TO vkit_workers]],
  [[GRANT UPDATE (status, outcome, finished_at, note, progress) ON vkit.attempts TO vkit_workers]],
  [[GRANT INSERT ON vkit.artifacts TO vkit_workers]],
}

local FUNCTIONS = {
  -- Whether the role sending the statement acts as a group (by inheritance).
  [[CREATE OR REPLACE FUNCTION vkit.acts_as(group_role name) RETURNS boolean LANGUAGE sql STABLE
      SET search_path = pg_catalog, pg_temp
      AS $$ SELECT pg_has_role(current_user, group_role, 'USAGE') $$]],

  -- A run is created queued: no attempt, lease or outcome.
  [[CREATE OR REPLACE FUNCTION vkit.runs_begin_queued() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp AS $$
    BEGIN
      IF NEW.status <> 'queued' OR NEW.attempts <> 0 OR NEW.outcome IS NOT NULL OR NEW.summary IS NOT NULL
         OR NEW.error IS NOT NULL OR NEW.cancel_requested OR NEW.lease_token IS NOT NULL
         OR NEW.lease_owner IS NOT NULL OR NEW.lease_expires_at IS NOT NULL OR NEW.lease_role IS NOT NULL
         OR NEW.worker_pid IS NOT NULL THEN
        RAISE EXCEPTION 'run % must be created queued, with no attempt, lease or outcome (it was sent %)',
          NEW.run_id, NEW.status USING ERRCODE = 'VK002';
      END IF;
      RETURN NEW;
    END $$]],

  -- Each step of an unfinished run (a finished one is runs_stay_finished's).
  (([[CREATE OR REPLACE FUNCTION vkit.runs_follow_lease() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp AS $$
    DECLARE
      at timestamptz := clock_timestamp();
      live boolean := coalesce(OLD.lease_expires_at > at, false);
      mine boolean := coalesce(OLD.lease_role = session_user, false);
      last record;
    BEGIN
      IF OLD.status IN ('done', 'failed', 'cancelled') THEN
        RETURN NEW;
      END IF;
      IF (NEW.run_id, NEW.seq, NEW.kind, NEW.job, NEW.created_at)
         IS DISTINCT FROM (OLD.run_id, OLD.seq, OLD.kind, OLD.job, OLD.created_at) THEN
        RAISE EXCEPTION 'run %: its job never changes', OLD.run_id USING ERRCODE = 'VK002';
      END IF;
      IF OLD.cancel_requested AND NOT NEW.cancel_requested THEN
        RAISE EXCEPTION 'run %: a cancellation cannot be withdrawn', OLD.run_id USING ERRCODE = 'VK002';
      END IF;
      NEW.lease_role := OLD.lease_role;
      SELECT status, outcome INTO last FROM vkit.attempts WHERE run_id = OLD.run_id AND attempt = OLD.attempts;

      -- A claim: a queued run, or a running one whose lease lapsed, gets its
      -- next attempt under a fresh lease bound to the claiming login.
      IF NEW.attempts IS DISTINCT FROM OLD.attempts THEN
        IF NOT vkit.acts_as('vkit_workers') THEN
          RAISE EXCEPTION 'run %: only a worker role (vkit_workers) claims a run', OLD.run_id USING ERRCODE = '42501';
        END IF;
        IF NEW.status <> 'running' OR NEW.attempts <> OLD.attempts + 1 OR OLD.cancel_requested
           OR NOT (OLD.status = 'queued' OR NOT live) THEN
          RAISE EXCEPTION 'run %: a claim takes a queued run, or one whose lease lapsed, to its next attempt',
            OLD.run_id USING ERRCODE = 'VK002';
        END IF;
        IF last.status = 'running' THEN
          RAISE EXCEPTION 'run %: attempt % has not ended', OLD.run_id, OLD.attempts USING ERRCODE = 'VK002';
        END IF;
        IF NEW.lease_token IS NULL OR NEW.lease_token IS NOT DISTINCT FROM OLD.lease_token
           OR NEW.lease_expires_at IS NULL OR NEW.lease_expires_at <= at OR NEW.lease_expires_at > at + $MAX_LEASE THEN
          RAISE EXCEPTION 'run %: a claim needs a fresh token and a lease that ends within the bound', OLD.run_id
            USING ERRCODE = 'VK002';
        END IF;
        IF (NEW.outcome, NEW.summary, NEW.error) IS DISTINCT FROM (OLD.outcome, OLD.summary, OLD.error) THEN
          RAISE EXCEPTION 'run %: an outcome is recorded only when the run ends', OLD.run_id USING ERRCODE = 'VK002';
        END IF;
        NEW.lease_role := session_user;
        RETURN NEW;
      END IF;
      IF (NEW.lease_token, NEW.lease_owner, NEW.worker_pid) IS DISTINCT FROM (OLD.lease_token, OLD.lease_owner, OLD.worker_pid) THEN
        RAISE EXCEPTION 'run %: only a claim gives a lease', OLD.run_id USING ERRCODE = 'VK002';
      END IF;

      -- The same status: a lease renewed by its holder, or a cancellation requested.
      IF NEW.status = OLD.status THEN
        IF NEW.lease_expires_at IS DISTINCT FROM OLD.lease_expires_at THEN
          IF NOT (OLD.status = 'running' AND live AND mine) THEN
            RAISE EXCEPTION 'run %: only the login holding its live lease renews it', OLD.run_id USING ERRCODE = 'VK001';
          END IF;
          IF NEW.lease_expires_at IS NULL OR NEW.lease_expires_at <= at OR NEW.lease_expires_at > at + $MAX_LEASE THEN
            RAISE EXCEPTION 'run %: a lease ends within the bound', OLD.run_id USING ERRCODE = 'VK002';
          END IF;
        END IF;
        IF (NEW.outcome, NEW.summary, NEW.error) IS DISTINCT FROM (OLD.outcome, OLD.summary, OLD.error) THEN
          RAISE EXCEPTION 'run %: an outcome is recorded only when the run ends', OLD.run_id USING ERRCODE = 'VK002';
        END IF;
        RETURN NEW;
      END IF;
      IF NEW.status NOT IN ('done', 'failed', 'cancelled') THEN
        RAISE EXCEPTION 'run %: no step leads from % to %', OLD.run_id, OLD.status, NEW.status USING ERRCODE = 'VK002';
      END IF;

      -- The end of an attempt that ran: by the login holding the live lease,
      -- as that attempt's row (recorded first) says it ended.
      IF OLD.status = 'running' AND live THEN
        IF NOT mine THEN
          RAISE EXCEPTION 'run %: only the login holding its live lease ends it', OLD.run_id USING ERRCODE = 'VK001';
        END IF;
        IF last.status IS DISTINCT FROM NEW.status OR last.outcome IS DISTINCT FROM NEW.outcome THEN
          RAISE EXCEPTION 'run %: it ends as its attempt % ended, recorded first (the attempt says %, %)',
            OLD.run_id, OLD.attempts, last.status, coalesce(last.outcome, 'no outcome') USING ERRCODE = 'VK002';
        END IF;
        RETURN NEW;
      END IF;

      -- Otherwise nothing ran to its end: the run is settled, with no outcome.
      IF NEW.status = 'done' OR NEW.outcome IS NOT NULL OR NEW.summary IS NOT NULL THEN
        RAISE EXCEPTION 'run %: only the login holding its live lease records an outcome', OLD.run_id
          USING ERRCODE = 'VK001';
      END IF;
      IF OLD.status = 'running' AND last.status = 'running' THEN
        RAISE EXCEPTION 'run %: attempt % has not ended', OLD.run_id, OLD.attempts USING ERRCODE = 'VK002';
      END IF;
      IF NEW.status = 'cancelled' AND NOT NEW.cancel_requested THEN
        RAISE EXCEPTION 'run %: it is cancelled only once that was requested', OLD.run_id USING ERRCODE = 'VK002';
      END IF;
      IF (NEW.status = 'failed' OR OLD.status = 'running') AND NOT vkit.acts_as('vkit_workers') THEN
        RAISE EXCEPTION 'run %: only a worker role (vkit_workers) settles it %', OLD.run_id, NEW.status
          USING ERRCODE = '42501';
      END IF;
      RETURN NEW;
    END $$]]):gsub("%$MAX_LEASE", MAX_LEASE)),

  -- A finished run never changes again, nor goes: whatever a client sends.
  [[CREATE OR REPLACE FUNCTION vkit.runs_stay_finished() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status IN ('done', 'failed', 'cancelled') THEN
        RAISE EXCEPTION 'run % is finished (%): it cannot change', OLD.run_id, OLD.status
          USING ERRCODE = 'P0001';
      END IF;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NEW;
    END $$]],

  -- An attempt is begun, renewed with progress and ended once, by the
  -- login holding its live lease; it is given up (abandoned) by that login
  -- or, once the lease lapsed, by any worker; then it never changes.
  [[CREATE OR REPLACE FUNCTION vkit.attempts_follow_lease() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp AS $$
    DECLARE
      at timestamptz := clock_timestamp();
      run record;
      held boolean;
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'attempt % of run % is history: it is never deleted', OLD.attempt, OLD.run_id
          USING ERRCODE = 'P0001';
      END IF;
      IF TG_OP = 'UPDATE' THEN
        IF OLD.status <> 'running' THEN
          RAISE EXCEPTION 'attempt % of run % ended (%): it cannot change', OLD.attempt, OLD.run_id, OLD.status
            USING ERRCODE = 'P0001';
        END IF;
        IF (NEW.run_id, NEW.attempt, NEW.worker, NEW.worker_pid, NEW.lease_token, NEW.started_at, NEW.claimed_by)
           IS DISTINCT FROM (OLD.run_id, OLD.attempt, OLD.worker, OLD.worker_pid, OLD.lease_token, OLD.started_at,
                             OLD.claimed_by) THEN
          RAISE EXCEPTION 'attempt % of run %: who ran it and under which lease never change', OLD.attempt, OLD.run_id
            USING ERRCODE = 'VK002';
        END IF;
      END IF;
      SELECT status, attempts, lease_token, lease_role, lease_expires_at INTO run FROM vkit.runs
        WHERE run_id = NEW.run_id;
      held := coalesce(run.status = 'running' AND run.attempts = NEW.attempt AND run.lease_token = NEW.lease_token
                       AND run.lease_role = session_user AND run.lease_expires_at > at, false);
      IF TG_OP = 'INSERT' THEN
        IF NOT held THEN
          RAISE EXCEPTION 'attempt % of run % is begun only by the login holding that attempt''s live lease',
            NEW.attempt, NEW.run_id USING ERRCODE = 'VK001';
        END IF;
        IF NEW.status <> 'running' OR NEW.outcome IS NOT NULL OR NEW.finished_at IS NOT NULL OR NEW.note IS NOT NULL
           OR NEW.progress <> '' THEN
          RAISE EXCEPTION 'attempt % of run % begins running, with nothing recorded', NEW.attempt, NEW.run_id
            USING ERRCODE = 'VK002';
        END IF;
        NEW.claimed_by := session_user;
        RETURN NEW;
      END IF;
      IF NEW.status = 'abandoned' THEN
        IF NEW.outcome IS NOT NULL THEN
          RAISE EXCEPTION 'attempt % of run %: an abandoned attempt has no outcome', OLD.attempt, OLD.run_id
            USING ERRCODE = 'VK002';
        END IF;
        IF coalesce(OLD.claimed_by = session_user, false) OR (vkit.acts_as('vkit_workers') AND NOT coalesce(
             run.status = 'running' AND run.attempts = OLD.attempt AND run.lease_expires_at > at, false)) THEN
          RETURN NEW;
        END IF;
        RAISE EXCEPTION 'attempt % of run % is given up only by its login, or by a worker once its lease lapsed',
          OLD.attempt, OLD.run_id USING ERRCODE = 'VK001';
      END IF;
      IF NOT held THEN
        RAISE EXCEPTION 'attempt % of run %: only the login holding its live lease records it', OLD.attempt, OLD.run_id
          USING ERRCODE = 'VK001';
      END IF;
      IF NEW.status = 'running' THEN
        IF (NEW.outcome, NEW.finished_at, NEW.note) IS DISTINCT FROM (OLD.outcome, OLD.finished_at, OLD.note) THEN
          RAISE EXCEPTION 'attempt % of run %: a running attempt records only its progress', OLD.attempt, OLD.run_id
            USING ERRCODE = 'VK002';
        END IF;
        RETURN NEW;
      END IF;
      IF NEW.finished_at IS NULL THEN
        RAISE EXCEPTION 'attempt % of run %: its end records when', OLD.attempt, OLD.run_id USING ERRCODE = 'VK002';
      END IF;
      RETURN NEW;
    END $$]],

  -- A file is retained by its attempt's own login before the attempt
  -- ends (a worker whose lease was lost still keeps its files, for the
  -- record), and the index of retained files never changes.
  [[CREATE OR REPLACE FUNCTION vkit.artifacts_stay() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp AS $$
    DECLARE
      a record;
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        RAISE EXCEPTION 'the files retained by attempt % of run % never change', OLD.attempt, OLD.run_id
          USING ERRCODE = 'P0001';
      END IF;
      SELECT status, claimed_by INTO a FROM vkit.attempts WHERE run_id = NEW.run_id AND attempt = NEW.attempt;
      IF NOT coalesce(a.status = 'running' AND a.claimed_by = session_user, false) THEN
        RAISE EXCEPTION 'attempt % of run %: files are retained only by its own login, before it ends', NEW.attempt,
          NEW.run_id USING ERRCODE = 'VK001';
      END IF;
      RETURN NEW;
    END $$]],
}

local TRIGGERS = {
  { "runs_begin_queued", "BEFORE INSERT ON vkit.runs", "vkit.runs_begin_queued" },
  { "runs_follow_lease", "BEFORE UPDATE ON vkit.runs", "vkit.runs_follow_lease" },
  { "runs_stay_finished", "BEFORE UPDATE OR DELETE ON vkit.runs", "vkit.runs_stay_finished" },
  { "attempts_follow_lease", "BEFORE INSERT OR UPDATE OR DELETE ON vkit.attempts", "vkit.attempts_follow_lease" },
  { "artifacts_stay", "BEFORE INSERT OR UPDATE OR DELETE ON vkit.artifacts", "vkit.artifacts_stay" },
}

--- Migration 3's statements, each safe to apply again (a store already at
--  3, or half-made by hand, ends the same).
function M.statements()
  local out = {
    -- Who holds a run's lease, and who began each attempt: set by the
    -- guards from session_user, never sent by a client.
    [[ALTER TABLE vkit.runs ADD COLUMN IF NOT EXISTS lease_role text]],
    [[ALTER TABLE vkit.attempts ADD COLUMN IF NOT EXISTS claimed_by text]],
  }
  for _, s in ipairs(ROLES) do out[#out + 1] = s end
  for _, s in ipairs(FUNCTIONS) do out[#out + 1] = s end
  for _, t in ipairs(TRIGGERS) do
    -- Trigger names come from the table above, never from a request.
    out[#out + 1] = ("DROP TRIGGER IF EXISTS %s ON %s"):format(t[1], t[2]:match "ON (%S+)$")
    out[#out + 1] = ("CREATE TRIGGER %s %s FOR EACH ROW EXECUTE FUNCTION %s()"):format(t[1], t[2], t[3])
  end
  return out
end

return M
