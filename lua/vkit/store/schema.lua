--- The PostgreSQL job store's schema, as numbered migrations.
--
-- Every statement is fixed text: no migration, and no query of the store,
-- is ever built from request data (values travel as parameters).  Each
-- migration is a list of statements applied in one transaction with the
-- version it brings the schema to; `vkit store migrate` applies those the
-- database lacks, holding an advisory lock so two migrators cannot race.
--
-- Privileges: the tables belong to the role that migrates (the owner).
-- Versions 1 and 2 granted everything commands and workers need to one
-- group role, vkit_client.  Version 3 (vkit.store.pg_guards) splits it:
-- vkit_submitters queue and cancel, vkit_workers claim and record, each
-- with only the columns its steps touch, vkit_client becomes a member of
-- both, and triggers hold every role (the owner too) to a run's life:
-- created queued, an attempt begun and ended once by the login holding
-- its live lease, nothing finished ever changed.  No DELETE, no TRUNCATE,
-- no DDL for any client.
local pg_guards = require "vkit.store.pg_guards"

local M = {}

M.CLIENT_ROLE = "vkit_client"

M.migrations = {
  {
    version = 1,
    statements = {
      [[CREATE SCHEMA IF NOT EXISTS vkit]],
      [[CREATE TABLE vkit.settings (name text PRIMARY KEY, value text NOT NULL)]],
      [[CREATE TABLE vkit.runs (
          seq bigserial UNIQUE,
          run_id text PRIMARY KEY CHECK (run_id ~ '^r-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{12}$'),
          kind text NOT NULL,
          job text NOT NULL,
          status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
          attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
          outcome text,
          summary text,
          error text,
          cancel_requested boolean NOT NULL DEFAULT false,
          lease_token text,
          lease_owner text,
          lease_expires_at timestamptz,
          worker_pid integer,
          created_at text NOT NULL,
          updated_at text NOT NULL)]],
      [[CREATE INDEX runs_runnable ON vkit.runs (seq) WHERE status IN ('queued', 'running')]],
      [[CREATE TABLE vkit.attempts (
          run_id text NOT NULL REFERENCES vkit.runs (run_id),
          attempt integer NOT NULL CHECK (attempt >= 1),
          status text NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled', 'abandoned')),
          outcome text,
          worker text NOT NULL,
          worker_pid integer,
          lease_token text NOT NULL,
          started_at text NOT NULL,
          finished_at text,
          note text,
          PRIMARY KEY (run_id, attempt))]],
      [[CREATE TABLE vkit.artifacts (
          run_id text NOT NULL,
          attempt integer NOT NULL,
          path text NOT NULL CHECK (path <> '' AND path !~ '^/' AND path !~ '(^|/)\.\.?(/|$)'),
          sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
          size bigint NOT NULL CHECK (size >= 0),
          PRIMARY KEY (run_id, attempt, path),
          FOREIGN KEY (run_id, attempt) REFERENCES vkit.attempts (run_id, attempt))]],
      -- A finished run never changes again: whatever a client sends.
      [[CREATE FUNCTION vkit.runs_stay_finished() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF OLD.status IN ('done', 'failed', 'cancelled') THEN
            RAISE EXCEPTION 'run % is finished (%): it cannot change', OLD.run_id, OLD.status
              USING ERRCODE = 'P0001';
          END IF;
          RETURN NEW;
        END $$]],
      [[CREATE TRIGGER runs_stay_finished BEFORE UPDATE ON vkit.runs
          FOR EACH ROW EXECUTE FUNCTION vkit.runs_stay_finished()]],
      -- Waiters hear of every change of a run, idle workers of new work.
      [[CREATE FUNCTION vkit.runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_notify('vkit_runs', NEW.run_id);
          IF NEW.status = 'queued' THEN PERFORM pg_notify('vkit_queue', NEW.run_id); END IF;
          RETURN NEW;
        END $$]],
      [[CREATE TRIGGER runs_notify AFTER INSERT OR UPDATE ON vkit.runs
          FOR EACH ROW EXECUTE FUNCTION vkit.runs_notify()]],
      [[DO $$ BEGIN
          CREATE ROLE vkit_client NOLOGIN;
        EXCEPTION WHEN duplicate_object THEN NULL;
        END $$]],
      [[GRANT USAGE ON SCHEMA vkit TO vkit_client]],
      [[GRANT SELECT, INSERT ON vkit.runs, vkit.attempts, vkit.artifacts TO vkit_client]],
      [[GRANT UPDATE (status, attempts, outcome, summary, error, cancel_requested, lease_token, lease_owner,
                      lease_expires_at, worker_pid, updated_at) ON vkit.runs TO vkit_client]],
      [[GRANT UPDATE (status, outcome, finished_at, note) ON vkit.attempts TO vkit_client]],
      [[GRANT SELECT ON vkit.settings, vkit.schema_version TO vkit_client]],
      [[GRANT USAGE ON SEQUENCE vkit.runs_seq_seq TO vkit_client]],
    },
  },
  {
    -- A running attempt's progress lines, published by its worker at each
    -- heartbeat for waiters on any machine (the file stays retained).
    version = 2,
    statements = {
      [[ALTER TABLE vkit.attempts ADD COLUMN progress text NOT NULL DEFAULT '']],
      [[GRANT UPDATE (progress) ON vkit.attempts TO vkit_client]],
    },
  },
  {
    -- Submitter and worker roles, and the guards of a run's history
    -- (vkit.store.pg_guards).  Idempotent, as its statements are.
    version = 3,
    statements = pg_guards.statements(),
  },
}

M.LATEST = M.migrations[#M.migrations].version

-- Made before the first migration, so a version can be recorded.
M.VERSION_TABLE = [[CREATE TABLE IF NOT EXISTS vkit.schema_version (
  version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())]]

return M
