/**
 * `nri-wire test-plugin` timeouts a plugin cold-started on a busy machine meets (through tsx, or
 * a bundle on another engine): its start-up is what they would measure, not the protocol.
 */
export const SLOW_START = ["--registration-timeout", "20000", "--request-timeout", "5000", "--gone-timeout", "10000"] as const;

/**
 * The Go runtime peer's timeouts (nri-peer `runtime` and `drive`, PEERS.md) for plugins
 * cold-started through tsx on a busy machine; its overall limit counts from its own start,
 * before any plugin is started.
 */
export const SLOW_START_GO_RUNTIME = ["--registration-timeout", "20s", "--request-timeout", "10s", "--plugin-wait", "90s", "--overall", "120s"] as const;

/** The timeout of a test that runs the Go runtime peer with SLOW_START_GO_RUNTIME: its own limit fails first, saying why. */
export const SLOW_START_TEST_MS = 180_000;
