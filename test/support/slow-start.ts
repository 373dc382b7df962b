/**
 * `nri-wire test-plugin` timeouts a plugin cold-started on a busy machine meets (through tsx, or
 * a bundle on another engine): its start-up is what they would measure, not the protocol.
 */
export const SLOW_START = ["--registration-timeout", "20000", "--request-timeout", "5000", "--gone-timeout", "10000"] as const;
