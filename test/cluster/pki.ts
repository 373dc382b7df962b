import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A client identity: its certificate and key files, and the kubeconfig that uses them. */
export interface Identity {
  readonly cert: string;
  readonly key: string;
  readonly kubeconfig: string;
}

/** The certificates, keys and kubeconfigs of one cluster run, all under one directory. */
export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  /** The API server's serving certificate. */
  readonly apiserver: { readonly cert: string; readonly key: string };
  /** The key pair service-account tokens are signed with (controller-manager) and checked with (API server). */
  readonly serviceAccount: { readonly key: string; readonly pub: string };
  /** cluster-admin (system:masters): the suite, kubectl and Helm. */
  readonly admin: Identity;
  /** The API server towards the kubelet (exec, logs, the node proxy). */
  readonly apiserverKubelet: Identity;
  readonly controllerManager: Identity;
  readonly scheduler: Identity;
  /** The kubelet, as system:node:<node>. */
  readonly kubelet: Identity;
}

function openssl(args: readonly string[], dir: string): void {
  try {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim() ?? "";
    throw new Error(`cluster: openssl ${args[0]} failed: ${stderr || (e as Error).message}`);
  }
}

/** A kubeconfig for `server` that names the CA and authenticates with a client certificate. */
export function kubeconfig(server: string, ca: string, cert: string, key: string): string {
  const b64 = (f: string) => readFileSync(f).toString("base64");
  return `apiVersion: v1
kind: Config
clusters:
- name: nri-wire
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(ca)}
users:
- name: user
  user:
    client-certificate-data: ${b64(cert)}
    client-key-data: ${b64(key)}
contexts:
- name: nri-wire
  context:
    cluster: nri-wire
    user: user
current-context: nri-wire
`;
}

/**
 * Generates a CA, the API server's serving certificate (valid for `ips` and the in-cluster
 * service names), client certificates for every component and `server`'s kubeconfigs, with
 * openssl, into `dir`. Valid for two days: one run uses them.
 */
export function generatePki(dir: string, server: string, node: string, ips: readonly string[]): Pki {
  mkdirSync(dir, { recursive: true });
  const f = (name: string) => join(dir, name);
  const days = "2";
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", days, "-subj", "/CN=nri-wire-ca"], dir);
  // sign NAME SUBJECT [EXT]: a key and a certificate for it signed by the CA.
  const sign = (name: string, subject: string, ext: string) => {
    writeFileSync(f(`${name}.ext`), ext);
    openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject], dir);
    openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.crt`, "-days", days, "-extfile", `${name}.ext`], dir);
  };
  const client = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n";
  const names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost", node];
  const alt = [...names.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(",");
  sign("apiserver", "/CN=kube-apiserver", `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${alt}\n`);
  const identity = (name: string, subject: string): Identity => {
    sign(name, subject, client);
    const cfg = f(`${name}.kubeconfig`);
    writeFileSync(cfg, kubeconfig(server, f("ca.crt"), f(`${name}.crt`), f(`${name}.key`)), { mode: 0o600 });
    return { cert: f(`${name}.crt`), key: f(`${name}.key`), kubeconfig: cfg };
  };
  openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
  return {
    dir,
    caCert: f("ca.crt"),
    caKey: f("ca.key"),
    apiserver: { cert: f("apiserver.crt"), key: f("apiserver.key") },
    serviceAccount: { key: f("sa.key"), pub: f("sa.pub") },
    admin: identity("admin", "/O=system:masters/CN=nri-wire-admin"),
    apiserverKubelet: identity("apiserver-kubelet", "/O=system:masters/CN=kube-apiserver-kubelet-client"),
    controllerManager: identity("controller-manager", "/CN=system:kube-controller-manager"),
    scheduler: identity("scheduler", "/CN=system:kube-scheduler"),
    kubelet: identity("kubelet", `/O=system:nodes/CN=system:node:${node}`),
  };
}
