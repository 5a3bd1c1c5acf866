import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/**
 * A PostgreSQL wire-protocol server in front of one PGlite instance, so node-postgres (ours and
 * pg-boss's) can use it like a real server over many connections.
 *
 * PGlite has a single session, so every connection shares its unnamed statement and portal.
 * The server therefore schedules whole protocol units, never single messages: an extended-query
 * exchange up to its Sync (Parse, Bind, Describe, Execute, Sync), or one simple Query. Once a
 * unit leaves PGlite inside a transaction, only that connection's units run until the
 * transaction ends; if that connection drops first, its transaction is rolled back.
 * (@electric-sql/pglite-socket schedules per message: concurrent parameterised queries from two
 * connections interleave there and fail with `portal "" does not exist`.)
 */
export class PgliteWireServer {
  private readonly server: net.Server;
  private readonly queue: Unit[] = [];
  private owner: Connection | null = null;
  private pumping = false;

  constructor(private readonly db: PGlite) {
    this.server = net.createServer((socket) => new Connection(socket, this));
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => resolve());
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  enqueue(unit: Unit): void {
    this.queue.push(unit);
    void this.pump();
  }

  disconnected(connection: Connection): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i]?.connection === connection) this.queue.splice(i, 1);
    }
    void this.pump(); // rolls back its transaction if it held one
  }

  /** The only place that runs anything on PGlite, one step at a time. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        // The transaction's connection went away: end its transaction before anyone else runs.
        if (this.owner?.closed) {
          await this.db.exec('ROLLBACK').catch(() => {});
          this.owner = null;
        }
        const index = this.owner ? this.queue.findIndex((u) => u.connection === this.owner) : 0;
        if (index < 0 || this.queue.length === 0) break;
        const [unit] = this.queue.splice(index, 1);
        if (!unit) break;
        await this.run(unit);
        this.owner = this.db.isInTransaction() ? unit.connection : null;
      }
    } finally {
      this.pumping = false;
    }
  }

  private async run(unit: Unit): Promise<void> {
    try {
      // One call per unit: fed message by message, PGlite lost the replies after an Execute with a
      // large result (over about 1 MB), and the connection's next query never got its answer.
      const input = unit.messages.length === 1 ? unit.messages[0]! : Buffer.concat(unit.messages);
      // The chunks PGlite hands over are views of memory it reuses, and a busy socket queues what
      // it is given by reference: copy each one, or a large reply goes out with later bytes in it.
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(input, { onRawData: (data) => unit.connection.write(Buffer.from(data)) }),
      );
    } catch {
      unit.connection.destroy();
    }
  }
}

interface Unit {
  connection: Connection;
  messages: Uint8Array[];
}

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
// Messages that end a unit: Sync, simple Query, Flush (a client waiting for output without Sync),
// function call, and COPY's data/done/fail.
const UNIT_END = new Set(['S', 'Q', 'H', 'F', 'd', 'c', 'f']);

class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Uint8Array[] = [];
  private started = false;
  closed = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly server: PgliteWireServer,
  ) {
    socket.on('data', (data) => this.receive(data));
    socket.on('close', () => this.close());
    socket.on('error', () => this.close());
  }

  write(data: Uint8Array): void {
    if (!this.closed) this.socket.write(data);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.disconnected(this);
  }

  private receive(data: Buffer): void {
    this.buffer = this.buffer.length === 0 ? data : Buffer.concat([this.buffer, data]);
    while (!this.closed) {
      if (!this.started) {
        // Startup-phase messages have no type byte: length, then a code.
        if (this.buffer.length < 8) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        const message = this.take(length);
        if (code === SSL_REQUEST) {
          this.socket.write('N'); // no TLS on a private unix socket
        } else if (code === CANCEL_REQUEST) {
          this.socket.end();
        } else if (code === PROTOCOL_3) {
          this.started = true;
          this.server.enqueue({ connection: this, messages: [message] });
        } else {
          this.socket.destroy();
        }
        continue;
      }
      if (this.buffer.length < 5) return;
      const length = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < length) return;
      const type = String.fromCharCode(this.buffer[0] ?? 0);
      const message = this.take(length);
      if (type === 'X') {
        this.socket.end();
        this.close();
        return;
      }
      this.pending.push(message);
      if (UNIT_END.has(type)) {
        this.server.enqueue({ connection: this, messages: this.pending });
        this.pending = [];
      }
    }
  }

  private take(length: number): Uint8Array {
    const message = new Uint8Array(this.buffer.subarray(0, length));
    this.buffer = this.buffer.subarray(length);
    return message;
  }
}
