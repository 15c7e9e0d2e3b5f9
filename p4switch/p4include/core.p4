/*
 * core.p4 -- the P4-16 core library of the p4switch software target.
 *
 * Declares the language-level built-ins every P4-16 program may use: the standard error
 * codes, the packet_in / packet_out externs used by parsers and deparsers, verify(),
 * NoAction and the three standard match kinds. Written for this project from the P4-16
 * language specification; names and signatures follow the specification so programs
 * compile unchanged with the reference compiler.
 */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard error codes, in the order the specification lists them. */
error {
    NoError,               /* parsing succeeded */
    PacketTooShort,        /* extract ran past the end of the packet */
    NoMatch,               /* a select expression matched no case */
    StackOutOfBounds,      /* next/last/index outside a header stack */
    HeaderTooShort,        /* a varbit extract asked for more bits than the field holds */
    ParserTimeout,         /* the parser ran for too long */
    ParserInvalidArgument  /* a parser operation got an invalid argument */
}

/* The packet being parsed: a cursor over the received bytes. */
extern packet_in {
    /* Read a fixed-size header at the cursor, mark it valid, move the cursor past it. */
    void extract<T>(out T hdr);
    /* Read a header whose single varbit field takes variableFieldSizeInBits bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read a value of type T at the cursor without moving it. */
    T lookahead<T>();
    /* Move the cursor forward. */
    void advance(in bit<32> sizeInBits);
    /* Total packet length in bytes. */
    bit<32> length();
}

/* The packet being built by a deparser. */
extern packet_out {
    /* Append hdr if it is a valid header (all valid headers, for structs and stacks). */
    void emit<T>(in T hdr);
}

/* In a parser: when check is false, stop parsing with the given error. */
extern void verify(in bool check, in error toSignal);

/* Compile-time check: the program does not compile when check is false. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

/* The action that does nothing; the usual default action of tables. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every target supports. */
match_kind {
    exact,
    ternary,
    lpm
}

#endif /* _CORE_P4_ */
