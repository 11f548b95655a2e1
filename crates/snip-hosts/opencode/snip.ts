// snip for OpenCode: every tool's output goes through `snip hook opencode`, which
// renders progress bars to their final frame, strips ANSI, collapses repeats, elides
// the middle of very long outputs (keeping error lines) and keeps each original in
// snip's local store; the markers it leaves quote a `snip_restore` call (served by the
// `snip` MCP server registered next to this plugin).
//
// Installed by `snip install opencode`, removed by `snip uninstall opencode`.
// snip-plugin: v1 (this line marks the file as snip's; edits are kept on uninstall)

const SNIP: string = process.env.SNIP_BIN || __SNIP_BIN__

/** Tool outputs shorter than this many characters are passed through untouched. */
const MIN_CHARS = 64

/** The text the model should see for one tool output; the input on any failure.
 * `saved`: the file where OpenCode saved the whole output it cut (snip compresses
 * that instead when the text starts with OpenCode's notice naming it). */
async function filter(tool: string, text: string, saved?: string): Promise<string> {
  if (typeof text !== "string" || text.length < MIN_CHARS) return text
  const args = [SNIP, "hook", "opencode", "--tool", tool]
  if (typeof saved === "string" && saved.length > 0) args.push("--saved", saved)
  try {
    const proc = Bun.spawn(args, {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    })
    proc.stdin.write(text)
    await proc.stdin.end()
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    return code === 0 && out.length > 0 ? out : text
  } catch {
    return text
  }
}

/** True when a shell command runs `snip restore` (a word whose last path component is
 * `snip`, quotes aside, followed by `restore`): restored bytes are never compressed
 * again. */
function runsSnipRestore(command: unknown): boolean {
  if (typeof command !== "string") return false
  const words = command
    .split(/[\s;&|()`]+/)
    .map((w) => w.replace(/^['"]+|['"]+$/g, ""))
    .filter((w) => w.length > 0)
  return words.some((w, i) => words[i + 1] === "restore" && w.split("/").pop() === "snip")
}

export const SnipPlugin = async () => ({
  "tool.execute.after": async (input: { tool: string; args?: any }, output: any) => {
    // snip's own MCP tools (`snip_snip_restore`, `snip_snip_stats`) are never rewritten,
    // nor is the output of a `snip restore` command.
    if (input.tool.startsWith("snip_snip_")) return
    if (input.tool === "bash" && runsSnipRestore(input.args?.command)) return
    if (typeof output?.output === "string") {
      // A bash output OpenCode cut names the file holding all of it.
      const saved = output?.metadata?.truncated === true ? output.metadata.outputPath : undefined
      output.output = await filter(input.tool, output.output, saved)
    } else if (Array.isArray(output?.content)) {
      // MCP tools: a list of content blocks; only text blocks are filtered.
      for (const block of output.content) {
        if (block?.type === "text" && typeof block.text === "string") {
          block.text = await filter(input.tool, block.text)
        }
      }
    }
  },
})
