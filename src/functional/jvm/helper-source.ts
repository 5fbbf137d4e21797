/**
 * Java source of berth's JVM helper, compiled with `javac` at first use into a cache folder
 * (see `helper.ts`). One class, two modes:
 *
 * - `compile <kotlinHome|->`: a warm compiler server. Reads requests on stdin and compiles a
 *   batch of Kotlin files (the Kotlin compiler from `<kotlinHome>/lib/kotlin-compiler.jar`, loaded
 *   once, called in-process as kotlinc does) or Java files (javax.tools, in-process javac).
 * - `run`: a runner for one sample: loads the sample's classes in a class loader of their own and
 *   calls its `main` on a thread of its own thread group, with stdout/stderr captured (capped) and
 *   a security manager that turns `System.exit` into a recorded exit status and refuses process
 *   creation, sockets, writes outside the scratch folder and raw writes to the protocol's file
 *   descriptors; after its answer the JVM halts (no JVM runs two samples). A sample that never
 *   returns is handled by the parent (kill). `train`: the same for several requests, for berth's
 *   own training programs only (`cds.ts`).
 *
 * Protocol: one request per line, tab-separated, free text base64-encoded (UTF-8).
 *   KC id outDir classpath file...   -> "R id exitCode b64(messages)"
 *   JC id outDir classpath file...   -> "R id exitCode b64(messages)"
 *   RUN id classesDir package mainClass outputCapBytes -> "R id exitCode millis b64(stdout) b64(stderr) dirty"
 *   (dirty = 1 when threads the sample started are still alive: the runner should be replaced)
 * The helper prints "READY" once warm.
 */
export const HELPER_CLASS = 'BerthJvmHelper';

export const HELPER_SOURCE = String.raw`
import java.io.*;
import java.lang.reflect.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.Permission;
import java.util.*;

public final class BerthJvmHelper {
  static PrintStream proto;

  static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) throws Exception {
    proto = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    if (args[0].equals("compile")) {
      compileLoop(in, args.length > 1 ? args[1] : "-");
    } else {
      // Classes every sample needs (the Kotlin stdlib): missing ones make the run itself broken.
      for (int i = 1; i < args.length; i++) {
        try {
          Class.forName(args[i], false, BerthJvmHelper.class.getClassLoader());
        } catch (Throwable t) {
          System.err.println("berth: the runner cannot load " + args[i] + ": " + t);
          Runtime.getRuntime().halt(3);
        }
      }
      runLoop(in, args[0].equals("run"));
    }
    Runtime.getRuntime().halt(0);
  }

  // ---------------------------------------------------------------- compile server
  static void compileLoop(BufferedReader in, String kotlinHome) throws Exception {
    Object kotlinCompiler = null;
    Method kotlinExec = null;
    if (!kotlinHome.equals("-")) {
      File lib = new File(kotlinHome, "lib");
      URLClassLoader loader = new URLClassLoader(new URL[] { new File(lib, "kotlin-compiler.jar").toURI().toURL() },
          ClassLoader.getPlatformClassLoader());
      Class<?> c = loader.loadClass("org.jetbrains.kotlin.cli.jvm.K2JVMCompiler");
      kotlinCompiler = c.getDeclaredConstructor().newInstance();
      kotlinExec = c.getMethod("exec", PrintStream.class, String[].class);
    }
    javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
    proto.println("READY");
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      String id = f[1];
      String outDir = f[2];
      String cp = f[3];
      List<String> files = Arrays.asList(f).subList(4, f.length);
      ByteArrayOutputStream msg = new ByteArrayOutputStream();
      PrintStream ps = new PrintStream(msg, true, "UTF-8");
      int code;
      try {
        if (f[0].equals("KC")) {
          List<String> a = new ArrayList<>();
          a.add("-d"); a.add(outDir);
          a.add("-kotlin-home"); a.add(kotlinHome);
          if (!cp.isEmpty()) { a.add("-classpath"); a.add(cp); }
          a.addAll(files);
          Object r = kotlinExec.invoke(kotlinCompiler, ps, a.toArray(new String[0]));
          code = ((Enum<?>) r).name().equals("OK") ? 0 : 1;
        } else {
          List<String> a = new ArrayList<>();
          a.add("-d"); a.add(outDir);
          a.add("-encoding"); a.add("UTF-8");
          if (!cp.isEmpty()) { a.add("-classpath"); a.add(cp); }
          a.addAll(files);
          code = javac.run(null, ps, ps, a.toArray(new String[0]));
        }
      } catch (Throwable t) {
        t.printStackTrace(ps);
        code = 3;
      }
      ps.flush();
      proto.println("R\t" + id + "\t" + code + "\t" + b64(msg.toString("UTF-8")));
    }
  }

  // ---------------------------------------------------------------- runner
  static final class ExitTrap extends SecurityException {
    final int status;
    ExitTrap(int status) { super("System.exit(" + status + ")"); this.status = status; }
  }

  static volatile ThreadGroup sampleGroup;
  static volatile Integer exitStatus;
  static String scratch;

  static boolean inSample() {
    ThreadGroup g = Thread.currentThread().getThreadGroup();
    ThreadGroup s = sampleGroup;
    if (s == null) return false;
    while (g != null) { if (g == s) return true; g = g.getParent(); }
    return false;
  }

  static final class Guard extends SecurityManager {
    @Override public void checkPermission(Permission p) {
      if (!inSample()) return;
      String n = p.getName();
      if (p instanceof RuntimePermission) {
        if (n.startsWith("exitVM")) return; // handled in checkExit
        if (n.equals("setSecurityManager") || n.equals("createSecurityManager") || n.equals("writeFileDescriptor")
            || n.equals("setFactory"))
          throw new SecurityException("berth: " + n + " is not allowed");
      } else if (p instanceof java.net.SocketPermission) {
        throw new SecurityException("berth: network access is not allowed (" + n + ")");
      } else if (p instanceof java.io.FilePermission) {
        String a = p.getActions();
        if (a.contains("execute")) throw new SecurityException("berth: starting processes is not allowed");
        if ((a.contains("write") || a.contains("delete")) && !n.startsWith(scratch))
          throw new SecurityException("berth: writing outside the sample's folder is not allowed (" + n + ")");
      }
    }
    @Override public void checkPermission(Permission p, Object ctx) { checkPermission(p); }
    @Override public void checkExit(int status) {
      if (!inSample()) return;
      if (exitStatus == null) exitStatus = status;
      throw new ExitTrap(status);
    }
  }

  static final class CappedStream extends OutputStream {
    final ByteArrayOutputStream buf = new ByteArrayOutputStream();
    final int cap;
    boolean truncated;
    CappedStream(int cap) { this.cap = cap; }
    @Override public synchronized void write(int b) {
      if (buf.size() < cap) buf.write(b); else truncated = true;
    }
    @Override public synchronized void write(byte[] b, int off, int len) {
      int room = cap - buf.size();
      if (len > room) { truncated = true; len = Math.max(room, 0); }
      buf.write(b, off, len);
    }
    synchronized String text() {
      String s = new String(buf.toByteArray(), StandardCharsets.UTF_8);
      return truncated ? s + "\n[berth: output truncated at " + cap + " bytes]" : s;
    }
  }

  // No JVM-global state is saved or restored between samples: a runner JVM answers one request
  // (mode run) and halts, so the next sample starts in a fresh JVM with the state a fresh java
  // has: default Locale (all categories), TimeZone, System properties, System.in (set empty
  // below), no default uncaught-exception handler, the JDK's security providers and properties,
  // JDK statics, no threads of another sample, an empty scratch folder of its own.
  // (Until December 2026 a warm runner ran up to 400 samples one after another and restored only
  // the state it knew of; later its snapshot, taken at every start although one sample ran, cost
  // a quarter of a runner JVM's CPU: it initialised TimeZone and every security provider.)
  //
  // What the runner still does for its one sample:
  // - a class loader of the sample's own over its classes folder (the compiler's output for its
  //   batch; other samples' packages are there too, but only this sample's main is called);
  // - the main on a thread named "main" in a thread group of its own, so the Guard can tell the
  //   sample's threads (and the threads they start) from the runner's;
  // - System.out and System.err replaced by capped buffers while the sample runs;
  // - the JVM waits for the sample's non-daemon threads, as java does;
  // - System.exit(n) recorded by the Guard as the exit status (JDK 17-23);
  // - an uncaught exception printed as the java launcher prints it, exit status 1.
  //
  // The answer line is written only by this thread, after the sample's main thread ended.
  // A sample can always decide its own verdict (System.exit(0) passes, as under mxeval's
  // java -jar); it cannot reach another sample's, which runs in another JVM, sandbox and uid.
  //
  // These comment lines also keep the helper's own frames at the line numbers they had before
  // (a test failure's text ends with "at BerthJvmHelper.lambda$runLoop$0(BerthJvmHelper.java:232)"),
  // so per-sample result texts stay comparable with earlier berth versions. Keep the count of
  // lines above runLoop's lambda unchanged, or say in docs/function-level-jvm.md that it moved.
  // ------------------------------------------------------------------------------------------------

  static Throwable unwrap(Throwable t) {
    while (t instanceof InvocationTargetException && t.getCause() != null) t = t.getCause();
    return t;
  }

  /**
   * Runs samples' mains, one per request; with once (mode run), exactly one: the JVM then halts, so
   * nothing a sample changes in it (JDK statics, properties, threads) can reach another sample.
   * Mode train (berth's own training programs, cds.ts) takes several, restoring nothing.
   */
  static void runLoop(BufferedReader in, boolean once) throws Exception {
    scratch = new File(".").getCanonicalPath();
    System.setIn(new ByteArrayInputStream(new byte[0]));
    boolean guarded = true;
    try {
      System.setSecurityManager(new Guard());
    } catch (UnsupportedOperationException e) {
      guarded = false; // JDK 24+: no security manager; System.exit then ends the runner
    }
    PrintStream origErr = System.err;
    proto.println(guarded ? "READY" : "READY\tunguarded");
    String line;
    int seq = 0;
    while ((line = in.readLine()) != null) {
      String[] f = line.split("\t", -1);
      String id = f[1];
      File classesDir = new File(f[2]);
      String pkg = f[3];
      String mainName = f[4];
      int cap = Integer.parseInt(f[5]);
      CappedStream out = new CappedStream(cap);
      CappedStream err = new CappedStream(cap);
      PrintStream pout = new PrintStream(out, true, "UTF-8");
      PrintStream perr = new PrintStream(err, true, "UTF-8");
      exitStatus = null;
      boolean dirty = false;
      final int[] code = { 0 };
      long start = System.nanoTime();
      URLClassLoader loader = new URLClassLoader(new URL[] { classesDir.toURI().toURL() },
          BerthJvmHelper.class.getClassLoader());
      Method main = null;
      try {
        main = findMain(loader, classesDir, pkg, mainName);
      } catch (Throwable t) {
        perr.println("Error: Could not find or load main class " + (pkg.isEmpty() ? "" : pkg + ".") + mainName);
        perr.println("Caused by: " + t);
        code[0] = 1;
      }
      if (main != null) {
        final Method m = main;
        ThreadGroup g = new ThreadGroup("berth-sample-" + (seq++));
        Thread t = new Thread(g, () -> {
          try {
            m.invoke(null, (Object) new String[0]);
          } catch (Throwable e) {
            Throwable c = unwrap(e);
            if (c instanceof ExitTrap || exitStatus != null) return;
            perr.print("Exception in thread \"main\" ");
            c.printStackTrace(perr);
            code[0] = 1;
          }
        }, "main");
        t.setContextClassLoader(loader);
        System.setOut(pout);
        System.setErr(perr);
        sampleGroup = g;
        t.start();
        t.join();
        // The JVM waits for the sample's non-daemon threads before it exits.
        while (true) {
          Thread[] ts = new Thread[g.activeCount() + 8];
          int n = g.enumerate(ts, true);
          Thread live = null;
          for (int i = 0; i < n; i++) if (ts[i].isAlive() && !ts[i].isDaemon()) { live = ts[i]; break; }
          if (live == null || exitStatus != null) break;
          live.join(50);
        }
        sampleGroup = null;
        dirty = g.activeCount() > 0;
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        System.setErr(origErr);
        if (exitStatus != null) code[0] = exitStatus;
      }
      long ms = (System.nanoTime() - start) / 1_000_000L;
      try { loader.close(); } catch (IOException e) { }
      pout.flush(); perr.flush();
      proto.println("R\t" + id + "\t" + code[0] + "\t" + ms + "\t" + b64(out.text()) + "\t" + b64(err.text()) + "\t" + (dirty ? 1 : 0));
      if (once) return;
    }
  }

  static Method findMain(ClassLoader loader, File classesDir, String pkg, String mainName) throws Exception {
    String prefix = pkg.isEmpty() ? "" : pkg + ".";
    try {
      Class<?> c = Class.forName(prefix + mainName, false, loader);
      Method m = c.getMethod("main", String[].class);
      if (Modifier.isStatic(m.getModifiers())) { m.setAccessible(true); return m; }
    } catch (ClassNotFoundException | NoSuchMethodException e) {
      // fall through: look for another class of the package with a static main
    }
    File dir = pkg.isEmpty() ? classesDir : new File(classesDir, pkg.replace('.', File.separatorChar));
    String[] names = dir.list();
    if (names != null) {
      Arrays.sort(names);
      for (String n : names) {
        if (!n.endsWith(".class") || n.contains("$")) continue;
        Class<?> c = Class.forName(prefix + n.substring(0, n.length() - 6), false, loader);
        try {
          Method m = c.getMethod("main", String[].class);
          if (Modifier.isStatic(m.getModifiers())) { m.setAccessible(true); return m; }
        } catch (NoSuchMethodException e) { }
      }
    }
    throw new ClassNotFoundException(prefix + mainName);
  }
}
`;
