/**
 * The rds4j user API: {@link org.rds4j.RdsStack}, {@link org.rds4j.RdsSocket}, {@link org.rds4j.RdsSelector},
 * their configurations, datagrams, options and errors.
 *
 * <p><b>Errors.</b> A call the kernel's RDS would refuse throws the {@link org.rds4j.RdsException} named for the
 * errno the kernel returns ({@link org.rds4j.EinvalException}, {@link org.rds4j.EnobufsException}, ...), with a
 * message saying what to do. A {@code null} argument is a mistake in the program rather than such a refusal, so every
 * public method and constructor here throws {@link java.lang.NullPointerException} for it, before any other check,
 * with a message that starts with the parameter's name and says what to pass ({@code "payload is null: pass a
 * ByteBuffer (use an empty one for a zero-length message)"}). Parameters that accept {@code null} say so.
 */
package org.rds4j;
