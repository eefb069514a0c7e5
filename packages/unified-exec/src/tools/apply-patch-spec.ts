import type { FunctionToolSpec } from './tool-specs.ts';

/** The apply_patch format as a Lark grammar: the original's `tool_apply_patch.lark`, verbatim. */
export const APPLY_PATCH_LARK_GRAMMAR: string = `start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
`;

/** A freeform (custom) tool: its input is raw text constrained by a grammar, not JSON. */
export interface FreeformToolSpec {
  type: 'custom';
  name: string;
  description: string;
  format: { type: 'grammar'; syntax: 'lark'; definition: string };
}

/**
 * The grammar when a turn has several environments (Codex 0.169.0): an optional
 * `*** Environment ID: <id>` line may follow `*** Begin Patch`.
 */
export const APPLY_PATCH_LARK_GRAMMAR_ENVIRONMENTS: string = APPLY_PATCH_LARK_GRAMMAR.replace(
  'start: begin_patch hunk+ end_patch',
  'start: begin_patch environment_id? hunk+ end_patch\nenvironment_id: "*** Environment ID: " filename LF',
);

/**
 * The freeform `apply_patch` tool, as the original sends it to APIs with custom tools; with
 * `multipleEnvironments`, its grammar lets the patch name an environment.
 */
export function applyPatchFreeformToolSpec(
  options: { multipleEnvironments?: boolean } = {},
): FreeformToolSpec {
  return {
    type: 'custom',
    name: 'apply_patch',
    description:
      'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
    format: {
      type: 'grammar',
      syntax: 'lark',
      definition: options.multipleEnvironments
        ? APPLY_PATCH_LARK_GRAMMAR_ENVIRONMENTS
        : APPLY_PATCH_LARK_GRAMMAR,
    },
  };
}

const APPLY_PATCH_FUNCTION_DESCRIPTION = `Use the \`apply_patch\` tool to edit files.
Your patch language is a stripped‑down, file‑oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high‑level envelope:

*** Begin Patch
[ one or more file sections ]
*** End Patch

Within that envelope, you get a sequence of file operations.
You MUST include a header to specify the action you are taking.
Each operation starts with one of three headers:

*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).
*** Delete File: <path> - remove an existing file. Nothing follows.
*** Update File: <path> - patch an existing file in place (optionally with a rename).

May be immediately followed by *** Move to: <new path> if you want to rename the file.
Then one or more “hunks”, each introduced by @@ (optionally followed by a hunk header).
Within a hunk each line starts with:

For instructions on [context_before] and [context_after]:
- By default, show 3 lines of code immediately above and 3 lines immediately below each change. If a change is within 3 lines of a previous change, do NOT duplicate the first change’s [context_after] lines in the second change’s [context_before] lines.
- If 3 lines of context is insufficient to uniquely identify the snippet of code within the file, use the @@ operator to indicate the class or function to which the snippet belongs. For instance, we might have:
@@ class BaseClass
[3 lines of pre-context]
- [old_code]
+ [new_code]
[3 lines of post-context]

- If a code block is repeated so many times in a class or function such that even a single \`@@\` statement and 3 lines of context cannot uniquely identify the snippet of code, you can use multiple \`@@\` statements to jump to the right context. For instance:

@@ class BaseClass
@@ \t def method():
[3 lines of pre-context]
- [old_code]
+ [new_code]
[3 lines of post-context]

The full grammar definition is below:
Patch := Begin { FileOp } End
Begin := "*** Begin Patch" NEWLINE
End := "*** End Patch" NEWLINE
FileOp := AddFile | DeleteFile | UpdateFile
AddFile := "*** Add File: " path NEWLINE { "+" line NEWLINE }
DeleteFile := "*** Delete File: " path NEWLINE
UpdateFile := "*** Update File: " path NEWLINE [ MoveTo ] { Hunk }
MoveTo := "*** Move to: " newPath NEWLINE
Hunk := "@@" [ header ] NEWLINE { HunkLine } [ "*** End of File" NEWLINE ]
HunkLine := (" " | "-" | "+") text NEWLINE

A full patch can combine several operations:

*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch

It is important to remember:

- You must include a header with your intended action (Add/Delete/Update)
- You must prefix new lines with \`+\` even when creating a new file
- File references can only be relative, NEVER ABSOLUTE.
`;

/**
 * The function variant of `apply_patch` (one string argument `input`), for APIs without custom
 * tools and for MCP: the original's JSON tool. Codex 0.169.0 itself only declares the freeform
 * tool; this is the wording of its earlier JSON declaration.
 */
export function applyPatchToolSpec(): FunctionToolSpec {
  return {
    name: 'apply_patch',
    description: APPLY_PATCH_FUNCTION_DESCRIPTION,
    strict: false,
    parameters: {
      type: 'object',
      properties: {
        input: { type: 'string', description: 'The entire contents of the apply_patch command' },
      },
      required: ['input'],
      additionalProperties: false,
    },
    outputSchema: { type: 'string', description: 'The apply_patch result text.' },
  };
}
