/**
 * The resources a built plugin's pod asks for, sized from what `npm run bench:ship` measures for
 * the sea form on Node 26 (docs/deployment.md has the figures): the request covers the peak RSS
 * under a sustained event load with room to spare, the limit leaves V8 its heap growth. No CPU
 * limit: a throttled plugin delays every container start on the node.
 */
export const POD_RESOURCES = {
  requests: { cpu: "10m", memory: "64Mi" },
  limits: { memory: "128Mi" },
} as const;
