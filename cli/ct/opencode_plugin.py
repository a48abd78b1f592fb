"""The OpenCode plugin `ct hooks opencode` prints or installs: OpenCode runs plugins in its
own process (JavaScript), so this small one passes each event to `ct hook opencode`
(`ct.opencode`) and carries out its answer. It holds no rule of its own: what to report,
refuse or say is decided by `ct`, as for every other agent.

What it does with an answer: a `decision: "deny"` before a tool throws, which refuses the
call and gives the model the reason as the tool's result (checked against OpenCode
1.18); a `context` is kept, and added to the system prompt of the session's next model
request (`experimental.chat.system.transform`). `ct` ends within two seconds whatever
happens; the plugin also gives up on it after five, and then goes on as if it said
nothing."""

import json

SOURCE = """\
// Control Tower's plugin for OpenCode, written by `ct hooks opencode`: it passes
// OpenCode's events to `ct hook opencode` and does what that answers. Edit it there.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const GIVE_UP_MS = 5000;

function ct(payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return resolve(null);
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), GIVE_UP_MS);
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", () => resolve(null));
    child.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(out.trim() ? JSON.parse(out) : null);
      } catch {
        resolve(null);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const ControlTower = async ({ directory }) => {
  const told = new Map(); // session -> text for the model's next request
  const models = new Map(); // assistant message -> its model
  const send = async (event, sessionID, fields = {}) => {
    const payload = { hook_event_name: event, session_id: sessionID, cwd: directory };
    const said = await ct({ ...payload, ...fields });
    if (said && typeof said.context === "string") {
      told.set(sessionID, [...(told.get(sessionID) || []), said.context]);
    }
    return said;
  };
  return {
    event: async ({ event }) => {
      const p = event.properties || {};
      if (event.type === "session.created" && p.info) {
        await send("session.created", p.info.id, { cwd: p.info.directory || directory });
      } else if (event.type === "session.idle") {
        await send("session.idle", p.sessionID);
      } else if (event.type === "permission.asked") {
        await send("permission.asked", p.sessionID, { message: p.title || p.permission || "" });
      } else if (event.type === "message.updated" && p.info && p.info.role === "assistant") {
        models.set(p.info.id, p.info.modelID);
      } else if (event.type === "message.part.updated" && p.part && p.part.type === "step-finish") {
        const model = models.get(p.part.messageID);
        const step = { part_id: p.part.id, model, tokens: p.part.tokens };
        await send("step.finish", p.part.sessionID, step);
      }
    },
    "chat.message": async (input, output) => {
      const words = (output.parts || []).filter((part) => part.type === "text");
      const prompt = words.map((part) => part.text).join("\\n");
      await send("chat.message", input.sessionID, { prompt });
    },
    "tool.execute.before": async (input, output) => {
      const fields = { tool_name: input.tool, tool_input: output.args };
      const said = await send("tool.execute.before", input.sessionID, fields);
      if (said && said.decision === "deny") throw new Error(said.reason);
    },
    "tool.execute.after": async (input) => {
      const fields = { tool_name: input.tool, tool_input: input.args };
      await send("tool.execute.after", input.sessionID, fields);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const waiting = told.get(input.sessionID);
      if (waiting) {
        told.delete(input.sessionID);
        output.system.push(...waiting);
      }
    },
  };
};
"""


def source(command: list[str]) -> str:
    """The plugin, running `command` (`ct hook opencode`, by its words)."""
    return SOURCE.replace("__COMMAND__", json.dumps(command))
