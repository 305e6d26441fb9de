/**
 * Prompt-injection detection by weighted heuristics: each rule is a family of phrasings that attacks use and
 * ordinary requests rarely do (override the instructions, reveal the system prompt, switch persona, forge chat
 * delimiters, address the AI from inside content). A text whose summed weight reaches INJECTION_THRESHOLD is
 * flagged: one strong signal, or two weaker ones together.
 *
 * Why heuristics and not a classifier: a model needs weights we cannot download here and hundreds of ms of CPU a
 * call; these rules are explainable (the trace names the rules that fired), cost microseconds, and their measured
 * precision and recall are asserted on a labelled set (test/guardrails/injection-detection.test.ts). Their limits
 * (paraphrase, other languages, encodings) are stated in docs/guardrails.md.
 */

export interface InjectionRule {
  id: string;
  weight: number;
  pattern: RegExp;
}

export const INJECTION_THRESHOLD = 1;

const PRIOR = '(?:previous|prior|preceding|above|earlier|former|initial|original|system|developer|all|any|your|the|these|those|my|other)';
const RULES_LIST = 'instructions?|prompts?|rules|directions|directives|guidelines|guidance|commands?|orders|constraints|restrictions|programming|context|policies|policy|safeguards?|filters?|settings';
const RULES_WORD = `(?:${RULES_LIST})`;

/** Blanks within one line (\s without the line terminators). */
const LINE_BLANKS = '[^\\S\\r\\n\\u2028\\u2029]*';

export const INJECTION_RULES: InjectionRule[] = [
  {
    // "Ignore all previous instructions", "disregard the rules above", "forget everything you were told"
    id: 'override_instructions',
    weight: 1,
    pattern: new RegExp(
      `\\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|neglect)\\b(?:\\s+(?:all|any|every|each|of|the|your|my|previous|prior|above|earlier|these|those|existing|current|original|initial|system|safety|security|content|moderation|ethical|built-in|other)){0,4}\\s+${RULES_WORD}`,
      'i',
    ),
  },
  {
    // The same in the languages attacks most often switch to (German, French, Spanish, Italian, Portuguese).
    id: 'override_instructions_i18n',
    weight: 1,
    pattern:
      /\b(?:ignoriere|vergiss|missachte)\b[^.\n]{0,30}\b(?:anweisungen|instruktionen|regeln|vorgaben)\b|\b(?:ignorez|ignore|oubliez|oublie)\s+(?:toutes\s+|tous\s+)?(?:les|vos|tes)\s+(?:\S+\s+)?(?:instructions|consignes|règles)\b|\b(?:ignora|olvida|ignore|esqueça|esqueca|dimentica)\b[^.\n]{0,30}\b(?:instrucciones|instruções|instrucoes|istruzioni|reglas|regole|regras)\b/i,
  },
  {
    // "The previous configuration is revoked", "the above rules no longer apply"
    id: 'revoke_instructions',
    weight: 0.8,
    pattern: new RegExp(
      `\\b(?:previous|prior|above|earlier|original|old|current)\\s+(?:configuration|${RULES_LIST})\\s+(?:is|are|has been|have been)\\s+(?:revoked|void|cancell?ed|obsolete|overridden|replaced|lifted|disabled)|\\b${RULES_WORD}\\s+(?:above|before this)\\s+no longer appl(?:y|ies)`,
      'i',
    ),
  },
  {
    // "Ignore the user's request and ...": content that redirects the task itself.
    id: 'hijack_task',
    weight: 0.6,
    pattern: /\b(?:ignore|disregard)\s+(?:the|your)\s+user(?:'s)?\s+(?:request|question|message|input|task)\b|\binstead,?\s+(?:you (?:must|should) )?(?:summari[sz]e|answer|reply|respond|write|say|output)\b[^.\n]{0,40}\b(?:approved|pwned|hacked)\b/i,
  },
  {
    id: 'override_everything',
    weight: 1,
    pattern: /\b(?:ignore|disregard|forget)\s+(?:everything|all(?: of)? (?:that|this|the above))\s+(?:above|before|prior|previously|you(?:'ve| have| were)? (?:been )?(?:told|given|instructed|said))/i,
  },
  {
    // "Reveal your system prompt", "print the hidden instructions", "what were you told before this"
    id: 'exfiltrate_prompt',
    weight: 1,
    pattern: new RegExp(
      `\\b(?:reveal|show|print|display|repeat|output|return|dump|leak|disclose|expose|tell me|give me|write out|spell out|what (?:is|are|were))\\b[^.\\n]{0,30}\\b(?:your|the|its|my)\\s+(?:full\\s+|complete\\s+|exact\\s+|entire\\s+)?(?:system|hidden|initial|original|secret|internal|developer|pre-?prompt|confidential)\\s+(?:message|${RULES_LIST})`,
      'i',
    ),
  },
  {
    id: 'exfiltrate_verbatim',
    weight: 1,
    pattern: /\b(?:repeat|print|output)\b[^.\n]{0,30}\b(?:everything|all(?: the)? text|the words?)\s+(?:above|before)\b/i,
  },
  {
    // "Do not follow your guidelines", "you are no longer bound by", "without any restrictions"
    id: 'disobey_instructions',
    weight: 1,
    pattern: new RegExp(`\\b(?:do not|don't|never|stop)\\s+(?:follow|obey|apply|respect|adhere to)(?:ing)?\\s+(?:${PRIOR}\\s+){0,3}${RULES_WORD}`, 'i'),
  },
  {
    id: 'disable_rules',
    weight: 0.6,
    pattern: new RegExp(
      `\\bno longer (?:bound|restricted|limited) by\\b|\\bwithout (?:any )?(?:restrictions|filters|limitations|censorship|safety)\\b|\\b(?:unfiltered|uncensored|unrestricted) (?:mode|ai|assistant|model|version|response)`,
      'i',
    ),
  },
  {
    // "You are now DAN", "from now on you will", "pretend you are", "act as an unrestricted AI"
    id: 'persona_switch',
    weight: 0.5,
    pattern: /\byou are now\b|\byou(?:'re| are) no longer\b|\b(?:respond|answer|reply|speak) as (?:the |an? |your )?(?:evil|unrestricted|unfiltered|jailbroken|uncensored|dark)\b|\bfrom now on,? (?:you|your)\b|\bpretend (?:to be|you are|that you are)\b|\bact as (?:if you (?:are|were) )?(?:an? )?(?:unrestricted|unfiltered|jailbroken|evil|different|new)\b|\broleplay as\b/i,
  },
  {
    id: 'jailbreak_terms',
    weight: 0.7,
    pattern: /\bDAN\b|\bdo anything now\b|\bdeveloper mode\b|\bjailbr(?:eak|oken)\b|\bgod mode\b|\bSTAN\b|\bDUDE mode\b|\bAIM\b(?= mode| prompt)/,
  },
  {
    // Forged chat structure: the special tokens of chat templates, or a line that claims to be the system.
    id: 'chat_template_tokens',
    weight: 1,
    pattern: /<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>/i,
  },
  {
    id: 'forged_role_line',
    weight: 0.8,
    // Leading blanks stop at the line's end (the next line's ^ is tried anyway), and no two runs of blanks meet: a
    // `^\s*#{0,3}\s*` could split one long gap every way from every line start, 40 s for 4,000 newlines.
    pattern: new RegExp(`<\\/?system>|^${LINE_BLANKS}(?:#{1,3}\\s*)?(?:system|developer)\\s*(?:(?:prompt|message)\\s*)?:|^${LINE_BLANKS}\\[(?:system|admin|developer)\\]`, 'im'),
  },
  {
    id: 'new_instructions',
    weight: 0.6,
    pattern: /\b(?:new|updated|real|actual|true|revised|secret|hidden|additional|important)\s+(?:system\s+)?(?:instructions?|rules|task|directive|objective)s?\s*(?:for (?:you|the (?:ai|assistant|agent|model)))?\s*[:\-–]/i,
  },
  {
    // Content that speaks to the model: "AI assistant, ignore ...", "Note to the AI: ...", "if you are an LLM reading this"
    id: 'addresses_model',
    weight: 0.7,
    pattern: /\b(?:note|message|attention|instructions?) (?:to|for) (?:the |any )?(?:ai|assistant|agent|llm|language model|chatbot|model)\b|\bif you are an? (?:ai|llm|language model|assistant|agent)\b|\b(?:dear|hey|hi) (?:ai|assistant|chatgpt|claude|llm)\b|\b(?:ai|llm|assistant|agent)\s*[,:]\s*(?:please\s+)?(?:ignore|disregard|forget|you must|send|forward|execute|call)\b/i,
  },
  {
    // Orders given to the model as such: weak alone, telling beside another signal.
    id: 'orders_model',
    weight: 0.3,
    pattern: /\b(?:you|the (?:assistant|ai|agent|model|llm))\s+(?:must|shall|are required to|has to|have to|will now)\b/i,
  },
  {
    // Acting on the user's data behind their back.
    id: 'covert_action',
    weight: 0.5,
    pattern: /\b(?:secretly|silently|covertly|quietly)\s+(?:add|send|forward|copy|rate|change|delete|transfer|include|insert|approve|bcc)\b|\bsilently\b[^.\n]{0,20}\b(?:bcc|cc)\b/i,
  },
  {
    id: 'conceal_from_user',
    weight: 0.5,
    pattern: /\bwithout (?:telling|informing|notifying|alerting) (?:the )?(?:user|human|anyone)\b|\b(?:do not|don't|never) (?:tell|mention|reveal|inform|disclose)(?: this| it| anything)?(?: (?:to|about this to))? (?:the )?(?:user|human)\b|\bdo not tell the user about this\b/i,
  },
  {
    // Sending the conversation, mail or secrets somewhere: the usual goal of an indirect injection.
    id: 'exfiltrate_data',
    weight: 0.5,
    pattern: /\b(?:forward|send|e-?mail|post|upload|leak|transfer|copy)\b[^.\n]{0,30}\b(?:all|every|the (?:entire|whole|full))\s+(?:messages?|conversations?(?: history)?|emails?|history|data|files|credentials|passwords|contacts|api keys)\b|\bsend the conversation(?: history)? to\b/i,
  },
];

export interface InjectionVerdict {
  flagged: boolean;
  score: number;
  /** Ids of the rules that matched, for the trace and the error message. */
  rules: string[];
}

/** Zero-width and bidi characters are removed and compatibility forms folded, so "ig\u200bnore" is "ignore". */
function normalise(text: string): string {
  return text.normalize('NFKC').replace(/[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]/g, '').replace(/[ \t]+/g, ' ');
}

/** Longer texts are scanned in windows, so a payload hidden in a large document is still found. */
const WINDOW = 4000;
const OVERLAP = 200;

/**
 * Base64 tokens long enough to carry a sentence; decoded (a few per text) and scanned too. A longer run is read in
 * tokens of at most 4,096 characters (a multiple of 4, so each still decodes on its own): unbounded, the regex
 * engine's backtracking stack overflowed on a run of ~10 MB of letters or digits (RangeError, the run failed).
 */
const BASE64_TOKEN = /[A-Za-z0-9+/]{24,4096}={0,2}/g;
const MAX_DECODED_TOKENS = 16;

function decodedPayloads(text: string): string {
  const out: string[] = [];
  for (const m of text.matchAll(BASE64_TOKEN)) {
    if (out.length >= MAX_DECODED_TOKENS) break;
    const decoded = Buffer.from(m[0], 'base64').toString('utf8');
    // Only text: a decoded binary is not an instruction.
    if (/^[\x20-\x7e\s]+$/.test(decoded)) out.push(decoded);
  }
  return out.join('\n');
}

export function detectInjection(text: string, rules: InjectionRule[] = INJECTION_RULES): InjectionVerdict {
  const decoded = decodedPayloads(text);
  const clean = normalise(decoded ? `${text}\n${decoded}` : text);
  let best: InjectionVerdict = { flagged: false, score: 0, rules: [] };
  for (let start = 0; start < clean.length || start === 0; start += WINDOW - OVERLAP) {
    const window = clean.slice(start, start + WINDOW);
    const hit = rules.filter((r) => r.pattern.test(window));
    const score = hit.reduce((s, r) => s + r.weight, 0);
    if (score > best.score) best = { flagged: score >= INJECTION_THRESHOLD, score: Math.round(score * 100) / 100, rules: hit.map((r) => r.id) };
    if (best.flagged || start + WINDOW >= clean.length) break;
  }
  return best;
}
