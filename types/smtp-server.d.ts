// The part of smtp-server (a test dependency without its own types) the SMTP capture uses.
declare module 'smtp-server' {
  import type { Readable } from 'node:stream';

  export interface SMTPAddress {
    address: string;
  }
  export interface SMTPSession {
    id: string;
    envelope: { mailFrom: SMTPAddress | false; rcptTo: SMTPAddress[] };
  }
  export interface SMTPServerOptions {
    authOptional?: boolean;
    disabledCommands?: string[];
    logger?: boolean;
    size?: number;
    onRcptTo?(address: SMTPAddress, session: SMTPSession, callback: (err?: Error | null) => void): void;
    onData?(stream: Readable, session: SMTPSession, callback: (err?: Error | null) => void): void;
  }
  export class SMTPServer {
    constructor(options?: SMTPServerOptions);
    listen(port: number, host: string, callback?: () => void): void;
    close(callback?: () => void): void;
    server: import('node:net').Server;
  }
}
