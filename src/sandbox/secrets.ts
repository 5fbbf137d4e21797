/**
 * Which environment variables look like credentials: the one rule behind every secret filter of
 * berth. No sandboxed command gets them from the host (local environments, function-level JVM
 * runners), a Harbor env template copies one only with consent (`--allow-env-secrets`), and a
 * record berth writes (an agent's command.txt, a config file) shows their values as `***`
 * (docs/security.md).
 */
/**
 * Host variable names never passed to commands (they look like credentials: `OPENAI_KEY`,
 * `GITHUB_PAT`, `DB_PASS`, `MYSQL_PWD`, `GPG_PASSPHRASE`, `CI_JOB_JWT`, `SESSION_COOKIE`,
 * `SENTRY_DSN`; a reviewer's list, session 9).
 */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASS|CREDENTIAL|PRIVATE|AUTH|JWT|COOKIE|SESSION|DSN)|_PAT$|_PWD$/i;

/**
 * A URL with user information in it (`postgres://app:pw@host`, `https://ghp_x@github.com/`), or
 * a query parameter whose name holds a credential word (`password=`, `api_key=`,
 * `access_token=`, `X-Amz-Signature=`, `client_secret=`, `sig=`): a credential whatever the
 * variable's name (breaker10 F2: `?api_key=` and `?access_token=` passed).
 */
const URL_WITH_CREDENTIALS =
  /[a-z][a-z0-9+.-]*:\/\/[^\s/@]+@|[?&;][^=&;\s]*(pass|pwd|token|key|secret|auth|sig|credential|session|jwt)[^=&;\s]*=/i;

/** Values shaped like well-known API keys and tokens (OpenAI, GitHub, Hugging Face, AWS, Slack, GitLab). */
const TOKEN_VALUE =
  /^\s*(Bearer\s+)?(sk-[a-z0-9_-]{8,}|gh[pousr]_[a-z0-9]{8,}|github_pat_|hf_[a-z0-9]{8,}|AKIA[0-9A-Z]{12,}|xox[abprs]-|glpat-)/i;

/** Whether a host variable looks like a credential (its name, or a value with one in it). */
export function looksSecret(name: string, value: string): boolean {
  return SECRET_NAME.test(name) || URL_WITH_CREDENTIALS.test(value) || TOKEN_VALUE.test(value);
}

/** The host's environment without the variables that look like credentials. */
export function withoutSecrets(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !looksSecret(key, value)) out[key] = value;
  }
  return out;
}

/** `env` as berth records it: the value of every variable that looks like a credential as `***`. */
export function redactSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, looksSecret(k, v) ? '***' : v]));
}
