"""What each durable session record becomes: the table docs/mapping.md is made from.

Apart from the adapter because it is documentation kept as data (it makes that
file, and tests/test_mapping_tables.py checks it row by row), not code a record
runs through.
"""

from __future__ import annotations

from streamv1.translator.reading.mapping import Row

MAPPING = (
    Row(
        "prompt",
        "`user`, a prompt (string or text/image content; not `isMeta`, no tool_result)",
        "starts a run at once (live, the prompt is seen when written): synthetic "
        "`system/init` with `cwd`, the prompt in `extension.prompt` and the record's other "
        "keys in `extension`; `agent.model` only where known by then (a subagent's sidecar "
        "`model`): each API call's model is on its assistant line and in the result's "
        "`model_usage`. Not echoed as a user line (print mode does not echo it either)",
    ),
    Row(
        "command",
        "`user` `<command-name>…` (and `system/local_command` with one)",
        "a prompt: a slash command starts a run",
    ),
    Row(
        "tool_result",
        "`user` with tool_result blocks",
        "`user`: blocks as written; `toolUseResult` → `tool_use_result` (object, string or "
        "list, as written); `permissionDecision`, `uuid`, … in `extension`. Counts toward "
        "`num_turns`",
    ),
    Row(
        "interrupt",
        "`user` `[Request interrupted by user]` (Esc, SIGINT)",
        "ends the run: `result/interrupted`, `is_error: true`, the marker in `extension.interrupt`",
    ),
    Row(
        "tool_interrupt",
        "`user` `[Request interrupted by user for tool use]` (an SDK "
        "host's `interrupt`, Esc while a tool runs)",
        "ends the run as the CLI does (`terminal_reason: aborted_tools`): "
        "`result/error_during_execution`, `is_error: true`, no `result` text, the marker in "
        "`extension.interrupt`; the marker counts toward `num_turns`",
    ),
    Row(
        "unfinished",
        "`cost-state` or `system/turn_duration` after a last block that is not the "
        "model's own word (a server tool call or its result: `pause_turn` or `end_turn` "
        "alike), or after no reply at all",
        "`result/error_during_execution`, as the CLI judges it (its `[ede_diagnostic]` "
        "names the last block): the run's last message is the model's and its last block "
        "is `text`, `thinking` or `redacted_thinking` (or tool results answer it): "
        '`success`, `result` = that text, `""` when it is no text; else the error. No '
        "reply record: `usage` left out (not known)",
    ),
    Row(
        "local_output",
        "`user` `<local-command-stdout>`, `<local-command-stderr>`, "
        "`<bash-stdout>`, `<bash-stderr>`",
        "`user` text line, as print mode replays it. A run with no model reply is a local "
        "command's: `num_turns: 0`, zero `usage`",
    ),
    Row(
        "compact_summary",
        "`user` `isCompactSummary`",
        "`user` text line (print mode replays the summary). Between turns it opens the next "
        "run (the `/compact` one), after that run's `system/compact_boundary`",
    ),
    Row(
        "meta_injected",
        "`user` `isMeta` after the model spoke (the max_tokens continuation "
        "note, stop-hook feedback)",
        "`user` text line once the model answers it (print mode shows these as `isSynthetic` "
        "user lines); counts toward `num_turns`",
    ),
    Row(
        "meta_context",
        "`user` `isMeta` before a prompt, or not answered (caveats, system "
        "reminders, skill bodies, command expansions)",
        "dropped on purpose (`user/isMeta`): print mode does not show them",
    ),
    Row(
        "assistant",
        "`assistant`",
        "`assistant` (one block per record, as written, any block type: `server_tool_use`, "
        "`web_search_tool_result`, `redacted_thinking`, text `citations` …); `model`, "
        "`stop_reason`, `usage` in `extension.message`; `requestId`, `uuid`, … in "
        "`extension`. A `<synthetic>` message (no API call) adds no usage",
    ),
    Row(
        "api_error",
        "`assistant` `isApiErrorMessage` (model `<synthetic>`, `error`) as the turn's last word",
        "the result has `is_error: true` and subtype `success`, as print mode prints it",
    ),
    Row(
        "turn_duration",
        "`system/turn_duration`",
        "ends the run: `result` with `duration_ms` = `durationMs` (interactive sessions)",
    ),
    Row(
        "cost_state",
        "`cost-state`",
        "ends the run of a print-mode invocation: `total_cost_usd` = `totalCostUSD`, the "
        "record in `extension.cost_state`. Outside a run: dropped on purpose",
    ),
    Row(
        "unanswered",
        "`cost-state` or `system/turn_duration` with a tool call never answered",
        "`result/error_during_execution` (the CLI stopped mid-turn: never `success`)",
    ),
    Row(
        "max_turns",
        "`attachment` `max_turns_reached`",
        "the run's result is `error_max_turns` (`is_error: true`), `num_turns` = "
        "`turnCount`; counted as dropped",
    ),
    Row(
        "budget",
        "`attachment` `budget_usd` (`--max-budget-usd`)",
        "when the invocation's cost (its `cost-state` less the one before) reached "
        "`total - used` with the turn unfinished: `result/error_max_budget_usd`; counted as "
        "dropped",
    ),
    Row(
        "structured",
        "`attachment` `structured_output` (`--json-schema`)",
        "the result's `result` is `data` as compact JSON, `extension.structured_output` = "
        "`data` (print mode's `structured_output`); counted as dropped",
    ),
    Row(
        "sidechain",
        "`user`/`assistant`/`system` with `isSidechain: true` in a main file "
        "(1.0.x–2.0.x: subagents inline)",
        "lines of the parent's run: `system/task_started` (`task.tool_use_id`, "
        "`task.prompt`, `task.subagent_type: subagent`), then its lines with "
        "`parent_tool_use_id` = the Task tool_use whose `input.prompt` is its prompt; its "
        "API calls count in the run's `model_usage`, not its `usage`. It ends when the "
        "parent gets that tool's result, or its parent's turn ends. No such tool_use: a run "
        "of its own with no id (never invented), written after its parent's run",
    ),
    Row(
        "agent_file",
        "a subagent file: `agent-<id>.jsonl`, or any file whose first "
        "conversation record has `isSidechain: true`",
        "one stream with its session's main file: its prompt is a `system/task_started` "
        "line of the parent's run (`task_id` = the agent id, `task.tool_use_id`, "
        "`task.description`, `task.subagent_type` = the sidecar's `agentType`, else "
        "`subagent`, `task.prompt`), its lines are lines of that run, in time order after "
        "the spawning tool call, with `parent_tool_use_id` (from `agent-<id>.meta.json`, "
        "else found in the parent session file). Converted alone: a run of its own whose "
        "init carries that id and `agent.role`",
    ),
    Row(
        "unspawned_agent",
        "an `agent-<id>.jsonl` (no sidecar) that no tool call spawned: 2.0.x writes one "
        "per agent it warms up at start (prompt `Warmup`)",
        "dropped on purpose (`agent/unspawned`, one per line it would make; its run's "
        "start and end go): its session file names no spawner and holds no tool call "
        "whose `input.prompt` is the file's first prompt before a record stamped after "
        "that prompt (else in the whole file), so it is no run and no subagent of any. "
        "Decided as soon as the session file holds that record, live too. With no "
        "session file beside it, it is converted as a subagent file (capture "
        "x_old_2_0_77_resume)",
    ),
    Row(
        "background_agent_file",
        "a background agent's file (sidecar `requestShape: background`)",
        "as a subagent file, its `task_started` with `task.is_backgrounded: true` (print "
        "mode's key): the answer to its call (the launch, `async_launched`) is not its "
        "end; its `<task-notification>` is",
    ),
    Row(
        "workflow_agent",
        "a Workflow tool's agent file: `<session>/subagents/workflows/<run id>/"
        "agent-<id>.jsonl` (sidecar `agentType: workflow-subagent`, no `toolUseId`)",
        "as a subagent file, nested under the Workflow call: `parent_tool_use_id` = the "
        "tool_use whose tool result's `toolUseResult.runId` is the folder's name (the "
        "CLI's `transcriptDir`), the last one made before the agent began (a resumed "
        "run, `resumeFromRunId`, reuses the run id and folder). The workflow runs in the "
        "background (`async_launched`): "
        "its agents' lines are lines of the run that launched it, which ends when its "
        "`<task-notification>` comes. `journal.jsonl` and `<session>/workflows/` are the "
        "CLI's workflow state, not transcripts: not read. Print mode shows none of the "
        "agents' lines (`task_started`/`task_progress` of the `local_workflow` task only)",
    ),
    Row(
        "side_call_file",
        "a side call's file: `<session>/subagents/agent-a<kind>-<hex>.jsonl` with no "
        "`.meta.json` (`kind` = the CLI's fork label: `prompt_suggestion`, "
        "`extract_memories`, …; a subagent is `agent-a<hex>`)",
        "no run, no subagent, no line: each record is counted as dropped "
        "(`side_call/<kind>`); the tokens of its own API calls (the assistant records "
        "after its prompt) count in the `model_usage` of the next result framed (the open "
        "run's, else the next run's), as print mode's cumulative `modelUsage` counts a "
        "suggestion in the next result. Records before its prompt are the main thread's, "
        "written there by 2.1.29 instead of the main file (the turn's last reply, named as "
        "`parentUuid` by the main file's next record): main-thread lines of that run, and "
        "the run ends on the model's word (not cut off)",
    ),
    Row(
        "agent_done",
        "`user` tool_result whose `toolUseResult` is an agent's (`agentId` "
        "or Task totals; not `async_launched`)",
        "`system/task_notification` just before the tool_result line: `task_id` = "
        "`agentId`, `status`, `task.tool_use_id`, `task.summary` = its last text, "
        "`task.usage` = `totalTokens`/`totalToolUseCount`/`totalDurationMs` as "
        "`total_tokens`/`tool_uses`/`duration_ms` (print mode's keys)",
    ),
    Row(
        "task_notification",
        "`user` prompt `<task-notification>` (a background agent finished)",
        "`system/task_notification` (`task_id`, `status`, `task.tool_use_id`, "
        "`task.summary` = `<result>`, `task.usage`, other tags in `task`) in the run it "
        "ends, then the prompt starts the next run",
    ),
    Row(
        "background",
        "a turn that launched background agents (`toolUseResult.status: "
        "async_launched`) and was marked ended (`system/turn_duration`, `cost-state`) while "
        "they ran",
        "the run stays open, its end mark kept, until the last of them notifies "
        "(`<task-notification>`), as print mode prints the result after them: the agents' "
        "lines are lines of that run. The next prompt or the input's end ends it first",
    ),
    Row(
        "queued_notification",
        "`attachment` `queued_command` whose `prompt` is a `<task-notification>` (a "
        "background agent finished while the turn was busy)",
        "`system/task_notification` (the fields of the prompt's row) in the run it is "
        "handed to, where the CLI hands it to the model (after a tool result); the turn no "
        "longer waits for that agent. Several are answered by one reply, in that run",
    ),
    Row(
        "fork_agent",
        "a fork subagent's file (`fork-context-ref`, sidecar `isFork`): its "
        "first `assistant` (the parent's spawning message, copied) and the `user` tool result "
        "after it",
        "the copy is dropped on purpose (`inherited/assistant`, "
        "`fork-context-ref`); the tool result is the fork's prompt (its `task_started`)",
    ),
    Row(
        "fork_copy",
        "a fork's copy of its parent's turns (`--fork-session`: records stamped "
        "before the `queue-operation` dequeue that precedes them)",
        "dropped on purpose (`inherited/<type>`): those turns are the parent session's, "
        "converted from its own file",
    ),
    Row(
        "prompt_ended",
        "`system` with `promptSubmitEnding` (`informational`: a UserPromptSubmit hook "
        "blocked the prompt, which is written nowhere)",
        "a run of its own, as print mode prints it: init (no `extension.prompt`), the "
        "record's line, a `success` result with `num_turns: 0`, zero `usage`, `result` = "
        "its `content`; it ends at the next record that ends a run (the invocation's "
        "`cost-state`, the next prompt)",
    ),
    Row(
        "agent_setting",
        "`agent-setting` (`--agent <name>`: the main thread's agent)",
        "dropped on purpose (counted); `agentSetting` goes on each later run's init as "
        "`extension.agentSetting` (print mode's init does not name it)",
    ),
    Row(
        "system_plain",
        "`system` with no subtype (1.0.x hook output)",
        "`system/notification`: `body` = `content`, `severity` = `level`",
    ),
    Row(
        "system_other",
        "`system/<other>` (`stop_hook_summary`, `compact_boundary`, "
        "`api_error`, `away_summary`, …)",
        "same subtype, fields in `extension`",
    ),
    Row(
        "system_init",
        "`system/init` (print mode's run start: not a durable record)",
        "`system/unrecognized` (`kind: system/init`), the record whole in `extension.record`: "
        "only the framer writes a run's init",
    ),
    Row(
        "metadata",
        "`attachment` (other types), `file-history-snapshot`, `api-request`, "
        "`api-request-blob`, `api-request-shape`, `queue-operation`, `last-prompt`, "
        "`tools-used`, `atis-latch`, `mode`, `permission-mode`, `summary`, `custom-title`, "
        "`ai-title`, `agent-name`, `pr-link`",
        "dropped on purpose: session metadata, UI state and request snapshots (counted per "
        "type in the result's `extension.dropped`, attachments per `attachment.type`)",
    ),
    Row(
        "progress",
        "`progress` (`hook_progress`, `bash_progress`, `agent_progress`, …)",
        "dropped on purpose: live UI feedback (an `agent_progress` repeats what its "
        "subagent file holds)",
    ),
    Row(
        "unknown", "anything else", "`system/unrecognized`, the record whole in `extension.record`"
    ),
)
