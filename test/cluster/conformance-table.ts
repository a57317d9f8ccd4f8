// The conformance table: every request the product sends to the API server, sent the way the
// product sends it (its own client, and its own code where that code can be driven from
// outside), each row run once against the real API server and once against the API stand-in.
// conformance.test.ts compares the two observations; conformance-read.ts says what an
// observation holds (the fields the product reads, as its own readers read them).
//
// A row is one of two kinds:
//   - one request, through the product's KubeClient method or request core, for an answer the
//     product must tell apart (a 404 that leads to a create, a 409, a 422, a 403, a 401, a 410);
//   - one step of a product component, driven as its loop drives it, with its API wrapped to
//     record each call's outcome in order: the lease writer's renewal, the condition writer's
//     tick, the elector's ticks, the controller's marks. Its observation is that call sequence
//     plus what the server then holds.
//
// Every row declares the product requests it stands for (`sends`, as requestSignature() writes
// them). The run against the stand-in checks that the row really sent each one (the stand-in's
// request record), and product-surface.test.ts checks that every request the product's commands
// send is declared by some row.
//
// Names: everything a row makes is named after the run (`np-conf-<run>-…`), the same on both
// servers, so names in the answers compare; nodes carry no kubernetes.io/os label, so no
// DaemonSet of another test places a pod on them. Times the product writes come from a manual
// clock fixed at CLOCK_START, so they compare too.
//
// Failure modes: a setup step that fails is a failed precondition of the row, with the answer;
// a row's product call that fails with anything but an API error fails the row.
//
// | file                      | what                                                               |
// |---------------------------|--------------------------------------------------------------------|
// | conformance-row.ts        | Row, its context, requestSignature, the fixtures rows build on     |
// | conformance-lease-rows.ts | 23 rows: the agent's lease, the election lease, the readers' lists,|
// |                           | watches and streaming lists of leases, cleanup's list and deletes  |
// | conformance-node-rows.ts  | 19 rows: Nodes (condition, marks, cleanup, readers), an Event's    |
// |                           | bounds, the agent DaemonSet, Pods                                  |
// | conformance-read.ts       | what the product reads of an answer                                |
// | conformance-targets.ts    | the real API server and the stand-in, behind one interface         |
import { LEASE_ROWS } from './conformance-lease-rows.ts';
import { NODE_ROWS } from './conformance-node-rows.ts';
import type { Row } from './conformance-row.ts';

export { CLOCK_START, requestSignature, rowClock, type Row, type RowContext } from './conformance-row.ts';

/** Every row, in the order both servers run them. */
export const ROWS: readonly Row[] = [...LEASE_ROWS, ...NODE_ROWS];
