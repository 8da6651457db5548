/*
 * Many keytool commands in one JVM (a JVM start costs a second or more on
 * the test machines): each line of the command file is one keytool
 * command line, its arguments separated by tabs, run through keytool's own
 * entry point (sun.security.tools.keytool.Main), exactly as the keytool
 * program runs it.  A line "> FILE" sends the standard output of the
 * commands after it to FILE (UTF-8), "> -" back to the terminal; blank
 * lines and lines starting with "#" are skipped.  keytool ends the JVM
 * with status 1 at the first command that fails, after printing why.
 *
 *   java --add-exports java.base/sun.security.tools.keytool=ALL-UNNAMED \
 *        KeytoolBatch.java COMMANDS
 *
 * (Java's single-file source launcher compiles this in memory.)
 */
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

public class KeytoolBatch {
	public static void main(String[] argv) throws Exception {
		PrintStream terminal = System.out;
		PrintStream file = null;

		for (String line : Files.readAllLines(Paths.get(argv[0]),
						       StandardCharsets.UTF_8)) {
			if (line.isEmpty() || line.startsWith("#"))
				continue;
			if (line.startsWith("> ")) {
				if (file != null)
					file.close();
				file = null;
				String name = line.substring(2);
				if (!name.equals("-"))
					file = new PrintStream(new FileOutputStream(name),
							       true, "UTF-8");
				System.setOut(file != null ? file : terminal);
				continue;
			}
			sun.security.tools.keytool.Main.main(line.split("\t"));
		}
		if (file != null)
			file.close();
	}
}
