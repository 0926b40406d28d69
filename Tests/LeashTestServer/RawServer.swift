import Foundation
import NIOCore
import NIOPosix

/// What a ``RawServer`` writes once it has read a request head.
public struct RawReply: Sendable {
    /// The bytes to write, exactly as given: a broken response, garbage, or nothing.
    public var bytes: Data
    /// Close the connection after writing; otherwise keep it open and silent.
    public var closes: Bool

    /// Creates a reply.
    public init(_ bytes: Data, closes: Bool = true) {
        self.bytes = bytes
        self.closes = closes
    }

    /// A reply from text, with `\n` turned into `\r\n`.
    public static func text(_ text: String, closes: Bool = true) -> RawReply {
        RawReply(Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8), closes: closes)
    }
}

/// A TCP server on 127.0.0.1 that answers each request head with raw bytes, for responses no
/// HTTP library would send: cut mid-header, garbage, a lying `Content-Length`.
///
/// It counts the connections it holds open, so a test can see whether a client let go of
/// every one.
public final class RawServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let state: RawState

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// How many connections are open now.
    public var openConnections: Int { state.open }
    /// How many connections the server has accepted.
    public var acceptedConnections: Int { state.accepted }

    private init(channel: any Channel, state: RawState) {
        self.channel = channel
        self.state = state
        self.port = channel.localAddress?.port ?? 0
    }

    /// Starts a server that answers every request head with `reply(head)`.
    ///
    /// - Parameter reply: The bytes for a request, given its head as text.
    /// - Returns: The running server.
    public static func start(_ reply: @escaping @Sendable (String) -> RawReply) async throws -> RawServer {
        let state = RawState()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                state.opened(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawHandler(reply: reply))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return RawServer(channel: channel, state: state)
    }

    /// Stops listening and closes every open connection.
    public func shutdown() async throws {
        try? await channel.close()
        for connection in state.channels {
            try? await connection.close()
        }
    }
}

private final class RawState: @unchecked Sendable {
    // Safe: every stored property is only touched while holding `lock`.
    private let lock = NSLock()
    private var live: [ObjectIdentifier: any Channel] = [:]
    private var count = 0

    var open: Int { lock.withLock { live.count } }
    var accepted: Int { lock.withLock { count } }
    var channels: [any Channel] { lock.withLock { Array(live.values) } }

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        lock.withLock {
            count += 1
            live[id] = channel
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.lock.withLock { self.live.removeValue(forKey: id) }
        }
    }
}

/// Reads until the end of a request head (and its `Content-Length` body), then replies.
private final class RawHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reply: @Sendable (String) -> RawReply
    private var buffer = ByteBuffer()

    init(reply: @escaping @Sendable (String) -> RawReply) {
        self.reply = reply
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        buffer.writeBuffer(&chunk)
        while let text = buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes),
            let end = text.range(of: "\r\n\r\n")
        {
            let head = String(text[..<end.lowerBound])
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let total = text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length
            guard buffer.readableBytes >= total else { return }
            buffer.moveReaderIndex(forwardBy: total)
            let answer = reply(head)
            if !answer.bytes.isEmpty {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: answer.bytes)), promise: nil)
            }
            if answer.closes {
                context.close(promise: nil)
                return
            }
        }
    }
}
