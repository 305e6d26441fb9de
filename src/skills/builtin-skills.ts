/**
 * Skills every organization has. Each is a compact, field-tested procedure: the model reads it only when a request
 * matches (through the load_skill tool), so the instructions can be specific without costing context on every run.
 */

export interface SkillDefinition {
  name: string;
  description: string;
  instructions: string;
}

export const BUILTIN_SKILLS: readonly SkillDefinition[] = [
  {
    name: 'summarize-document',
    description: 'Summarize a long document, thread or transcript into key points, decisions and open questions.',
    instructions: `Goal: a summary a busy reader can act on without opening the source.

1. Identify the document type (report, contract, meeting transcript, email thread, article) and who it is for.
2. Read everything before writing. Note: the main claim or purpose, decisions made, numbers and dates that matter,
   commitments (who will do what, by when), risks, and questions left open.
3. Write, in this order:
   - One-sentence bottom line.
   - Key points: 3-7 bullets, most important first, each a complete statement (not a topic label).
   - Decisions and action items: "Owner - action - due date" (write "unassigned" or "no date" when the source
     does not say; never invent them).
   - Open questions or risks, if any.
4. Keep figures, names and dates exactly as in the source. Quote short phrases when wording matters (legal terms).
5. Say what you could not read (scanned pages, missing attachments) instead of guessing.
Length: about 10% of the source, at most one page, unless the user asked otherwise.`,
  },
  {
    name: 'draft-email',
    description: 'Write or reply to a professional email with the right tone, a clear ask and nothing superfluous.',
    instructions: `1. Establish: the recipient and your relationship, the one outcome the email must achieve, and the deadline.
   If the request leaves the outcome unclear, ask one clarifying question before drafting.
2. Subject line: specific and scannable (e.g. "Approval needed: Q3 vendor contract by Fri 14 Jun").
3. Body:
   - First sentence states the purpose or the ask. No "I hope this finds you well" unless the user wants warmth.
   - Context: only what the recipient needs to act, in 1-3 short paragraphs or bullets.
   - The ask: explicit, with a date ("Could you confirm by Thursday?").
   - Close with the next step and a plain sign-off.
4. Replies: answer every question of the original in its order; quote a line when it avoids ambiguity.
5. Tone: match the user's and the recipient's register; be direct and courteous; no exclamation marks in formal mail.
6. Never invent facts, attachments, prices or commitments; mark placeholders like [DATE] for the user to fill in.
Return the subject line and the body, ready to paste.`,
  },
  {
    name: 'analyze-tabular-data',
    description: 'Analyze CSV or spreadsheet data: profile it, answer the question with numbers, state caveats.',
    instructions: `1. Profile before concluding: list the columns with their apparent types, the row count, missing values,
   duplicates, and obvious outliers or unit problems (mixed currencies, dates as text).
2. Restate the user's question as a precise computation (which rows, which columns, which aggregate, which grouping).
3. Compute carefully. Show intermediate figures (counts, sums) so the result can be checked. Prefer exact arithmetic;
   round only in the final presentation and say how you rounded.
4. Present the answer first, then a small table (at most ~15 rows) supporting it, then caveats: data quality issues
   found in step 1, assumptions made, and what additional data would change the conclusion.
5. Distinguish correlation from causation; never extrapolate beyond the data without saying so.
6. If the data is truncated or only partly visible to you, say which part you analysed.`,
  },
  {
    name: 'review-code',
    description: 'Review a code change or snippet for bugs, security issues and maintainability, with concrete fixes.',
    instructions: `Review in this priority order and report findings grouped by severity (blocker, major, minor, nit):
1. Correctness: logic errors, off-by-one, wrong edge cases (empty, null, very large, concurrent), error handling
   that swallows failures, resource leaks, race conditions.
2. Security: injection (SQL, shell, HTML), missing authorization checks, secrets in code or logs, unsafe
   deserialization, path traversal, SSRF, weak cryptography.
3. Behaviour changes: anything that alters public interfaces, data formats or defaults without saying so.
4. Tests: are the changed paths covered, including failure paths? Suggest the missing test cases.
5. Maintainability: naming, duplication, functions doing too much, comments that restate code instead of
   explaining why.
For each finding give: location (file and line or function), the problem in one sentence, why it matters, and a
concrete fix (a code snippet when short). Do not pad the review: if the code is fine, say so and list what you
checked. Never claim to have run code you have not run.`,
  },
  {
    name: 'plan-task',
    description: 'Break a complex or ambiguous request into an ordered plan with checkpoints before executing it.',
    instructions: `Use this before acting on requests that need several steps or tools.
1. Restate the goal in one sentence and the definition of done (what the user will receive).
2. List unknowns. Resolve the ones you can with available tools; ask the user only about the ones that change the
   outcome and cannot be looked up.
3. Write the plan as numbered steps. For each: the action, the tool to use (if any), and the expected result.
   Order steps so that cheap checks and information gathering come first and irreversible actions come last.
4. Mark steps that modify external systems (sending, deleting, paying, publishing) and confirm them with the user
   unless they explicitly asked for that action.
5. Execute step by step. After each step compare the result with the expectation; if it differs, revise the
   remaining plan instead of pushing on.
6. Finish with a short report: what was done, results, anything left undone and why.`,
  },
];

export const BUILTIN_SKILL_NAMES: ReadonlySet<string> = new Set(BUILTIN_SKILLS.map((s) => s.name));
