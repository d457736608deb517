// The parts of noVNC 1.7 (an untyped ES module) that the webview uses.
declare module '@novnc/novnc' {
  export interface RawChannel {
    binaryType: string;
    protocol: string;
    readyState: number | string;
    onopen: ((event?: unknown) => void) | null;
    onmessage: ((event: { data: ArrayBuffer | Uint8Array }) => void) | null;
    onerror: ((event?: unknown) => void) | null;
    onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null;
    send(data: Uint8Array): void;
    close(): void;
  }

  export default class RFB extends EventTarget {
    constructor(target: HTMLElement, channel: RawChannel | string, options?: { shared?: boolean });
    scaleViewport: boolean;
    resizeSession: boolean;
    clipViewport: boolean;
    focusOnClick: boolean;
    viewOnly: boolean;
    background: string;
    qualityLevel: number;
    compressionLevel: number;
    disconnect(): void;
    /** Offers text to the server's clipboard (extended UTF-8 clipboard when the server has it, else Latin-1). */
    clipboardPasteFrom(text: string): void;
    /** A key press (`down` true) or release; keysym mode or a QEMU key event by `code`, as the server allows. */
    sendKey(keysym: number, code: string | null, down?: boolean): void;
    focus(): void;
    blur(): void;
  }
}

declare module '*/core/display.js' {
  export default class Display {
    /** `target` is the visible canvas (a stand-in with getContext in test/unit/imageDecode.test.ts). */
    constructor(target: object);
    flip(fromQueue?: boolean): void;
    /** True while the render queue holds work (an image still decoding, and what follows it). */
    pending(): boolean;
    /** Queues a JPEG or PNG rectangle (Tight's JPEG, TightPNG); replaced by ./imageDecode.ts. */
    imageRect(x: number, y: number, width: number, height: number, mime: string, bytes: Uint8Array<ArrayBuffer>): void;
    /** Appends to the render queue, and draws at once what is ready when the queue was empty. */
    _renderQPush(action: object): void;
    /** Fills a rectangle with an RGB colour, in queue order. */
    fillRect(x: number, y: number, width: number, height: number, color: readonly number[]): void;
    /** Resolves once the render queue is empty. */
    flush(): Promise<void>;
  }
}
