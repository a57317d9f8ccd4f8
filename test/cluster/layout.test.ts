// The address plan of layout.ts, row by row, and the rules every address must keep: inside
// 198.18.0.0/15, and no two uses overlapping.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API_SERVICE_ADDRESS, BLOCK, BRIDGE, BRIDGE_ADDRESS, CLUSTER_CIDR, MAX_NODES, NODE_PREFIX_LENGTH, SERVICE_CIDR, nodeAddress, nodeCgroup, nodeName, nodeVeth,
} from './layout.ts';

const toInt = (ip: string): number => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const range = (cidr: string): [number, number] => {
  const [ip = '', bits = ''] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return [toInt(ip), toInt(ip) + size - 1];
};
const inside = (ip: string, cidr: string): boolean => {
  const [lo, hi] = range(cidr);
  return toInt(ip) >= lo && toInt(ip) <= hi;
};

test('the address plan, as the header\'s table gives it', () => {
  assert.equal(BRIDGE_ADDRESS, '198.18.0.1');
  assert.deepEqual([1, 2, 8].map(nodeAddress), ['198.18.0.11', '198.18.0.12', '198.18.0.18']);
  assert.equal(SERVICE_CIDR, '198.18.128.0/20');
  assert.equal(API_SERVICE_ADDRESS, '198.18.128.1');
  assert.equal(CLUSTER_CIDR, '198.19.0.0/16');
  assert.deepEqual([1, 3].map(nodeName), ['np-node-1', 'np-node-3']);
  assert.deepEqual([1, 3].map(nodeCgroup), ['/nodepulse-cluster/np-node-1', '/nodepulse-cluster/np-node-3']);
});

test('every address is inside the block, and the uses do not overlap', () => {
  const nodeNet = `${BRIDGE_ADDRESS.replace(/\.\d+$/, '.0')}/${NODE_PREFIX_LENGTH}`;
  for (const ip of [BRIDGE_ADDRESS, API_SERVICE_ADDRESS, ...Array.from({ length: MAX_NODES }, (_, i) => nodeAddress(i + 1))]) assert.ok(inside(ip, BLOCK), `${ip} in ${BLOCK}`);
  for (const cidr of [nodeNet, SERVICE_CIDR, CLUSTER_CIDR]) {
    const [lo, hi] = range(cidr);
    const [blo, bhi] = range(BLOCK);
    assert.ok(lo >= blo && hi <= bhi, `${cidr} in ${BLOCK}`);
  }
  const ranges = [nodeNet, SERVICE_CIDR, CLUSTER_CIDR].map(range).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < ranges.length; i++) assert.ok((ranges[i]?.[0] ?? 0) > (ranges[i - 1]?.[1] ?? 0), 'the node network, Services and pods do not overlap');
  for (let i = 1; i <= MAX_NODES; i++) assert.ok(inside(nodeAddress(i), nodeNet), `node ${i} is on the bridge's network`);
  assert.ok(inside(API_SERVICE_ADDRESS, SERVICE_CIDR), 'the kubernetes Service is the first of the range');
});

test('Linux interface names fit in 15 characters; a node index outside 1..MAX_NODES is refused', () => {
  for (const name of [BRIDGE, ...Array.from({ length: MAX_NODES }, (_, i) => nodeVeth(i + 1))]) assert.ok(name.length <= 15, `${name} fits IFNAMSIZ`);
  for (const bad of [0, MAX_NODES + 1, 1.5]) {
    assert.throws(() => nodeAddress(bad), { message: `node index: ${bad} must be an integer from 1 to ${MAX_NODES}` });
  }
});
