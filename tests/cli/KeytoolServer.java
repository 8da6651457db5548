/*
 * keytool in one JVM for a whole test script (tests/cli/lib.sh, KT):
 * a JVM start costs about 0.6 s of CPU, and the end-to-end scripts run
 * keytool more than a hundred times.  Each request runs keytool's own
 * entry point (sun.security.tools.keytool.Main.main) exactly as the
 * keytool program does, with the request's arguments, standard input and
 * output files; keytool's System.exit (its only way to fail) is caught and
 * becomes the request's exit status.
 *
 *   java -cp DIR -Djava.security.manager=allow [keytool's -J options] \
 *        KeytoolServer FOLDER PID
 *
 * FOLDER holds the named pipe "in" (made by the caller).  A request is the
 * line "N" written to it; the server reads FOLDER/N.args (the arguments,
 * each ended by a NUL byte), FOLDER/N.stdin if it exists, writes
 * FOLDER/N.out and FOLDER/N.err (one file, FOLDER/N.out, when
 * FOLDER/N.merge exists), then FOLDER/N.rc (the exit status), and
 * answers with the line "N" on the named pipe FOLDER/done.  A line
 * "quit" ends the server, and so does the end of process PID (the test
 * script) or of FOLDER, checked every second.  Relative paths are the
 * server's working folder's: the caller sends only requests made from
 * there.
 */
import java.io.ByteArrayInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.Permission;
import java.util.ArrayList;
import java.util.List;

public class KeytoolServer {
	/* keytool's System.exit(status), as an exception to the server. */
	static final class Exit extends SecurityException {
		final int status;

		Exit(int status) {
			super("exit " + status);
			this.status = status;
		}
	}

	/* Set by the watchdog: the server itself may end now. */
	static volatile boolean ending;

	@SuppressWarnings("removal")
	static final class NoExit extends SecurityManager {
		@Override
		public void checkPermission(Permission p) {
		}

		@Override
		public void checkPermission(Permission p, Object context) {
		}

		@Override
		public void checkExit(int status) {
			if (!ending)
				throw new Exit(status);
		}
	}

	static List<String> readArgs(Path p) throws Exception {
		byte[] b = Files.readAllBytes(p);
		List<String> args = new ArrayList<>();
		int start = 0;
		for (int i = 0; i < b.length; i++) {
			if (b[i] == 0) {
				args.add(new String(b, start, i - start,
						    StandardCharsets.UTF_8));
				start = i + 1;
			}
		}
		return args;
	}

	static int run(Path dir, String n) throws Exception {
		String[] args = readArgs(dir.resolve(n + ".args"))
				.toArray(new String[0]);
		Path in = dir.resolve(n + ".stdin");
		byte[] input = Files.exists(in) ? Files.readAllBytes(in)
						: new byte[0];
		boolean merge = Files.exists(dir.resolve(n + ".merge"));
		PrintStream out = new PrintStream(
			new FileOutputStream(dir.resolve(n + ".out").toFile()),
			true, "UTF-8");
		PrintStream err = merge ? out : new PrintStream(
			new FileOutputStream(dir.resolve(n + ".err").toFile()),
			true, "UTF-8");
		InputStream stdin = System.in;
		PrintStream stdout = System.out, stderr = System.err;
		int status = 0;
		System.setIn(new ByteArrayInputStream(input));
		System.setOut(out);
		System.setErr(err);
		try {
			sun.security.tools.keytool.Main.main(args);
		} catch (Exit e) {
			status = e.status;
		} catch (Throwable t) {
			/* What the JVM prints for an uncaught exception. */
			System.err.print("Exception in thread \"main\" ");
			t.printStackTrace(System.err);
			status = 1;
		} finally {
			System.out.flush();
			System.err.flush();
			System.setIn(stdin);
			System.setOut(stdout);
			System.setErr(stderr);
			out.close();
			if (err != out)
				err.close();
		}
		return status;
	}

	@SuppressWarnings("removal")
	public static void main(String[] argv) throws Exception {
		Path dir = Paths.get(argv[0]);
		Path parent = Paths.get("/proc", argv[1]);
		Thread watchdog = new Thread(() -> {
			while (Files.exists(parent) && Files.exists(dir)) {
				try {
					Thread.sleep(1000);
				} catch (InterruptedException e) {
					break;
				}
			}
			ending = true;
			Runtime.getRuntime().halt(0);
		});
		watchdog.setDaemon(true);
		watchdog.start();
		System.setSecurityManager(new NoExit());
		for (;;) {
			/* The pipe sees EOF after each writer: open it again. */
			try (BufferedReader r = new BufferedReader(new InputStreamReader(
				     new FileInputStream(dir.resolve("in").toFile()),
				     StandardCharsets.UTF_8))) {
				String line;
				while ((line = r.readLine()) != null) {
					if (line.equals("quit")) {
						ending = true;
						Runtime.getRuntime().halt(0);
					}
					if (line.isEmpty())
						continue;
					int status = run(dir, line);
					Path tmp = dir.resolve(line + ".rc.tmp");
					Files.write(tmp, (status + "\n").getBytes(
						StandardCharsets.US_ASCII));
					Files.move(tmp, dir.resolve(line + ".rc"),
						   StandardCopyOption.ATOMIC_MOVE);
					try (FileOutputStream done = new FileOutputStream(
						     dir.resolve("done").toFile())) {
						done.write((line + "\n").getBytes(
							StandardCharsets.US_ASCII));
					}
				}
			}
		}
	}
}
