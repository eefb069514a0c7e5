/**
 * The fork server's helper in perl, used where there is no trusted `python3` (see
 * `python-helper.ts`); it speaks the protocol described in `fork-server.ts`.
 *
 * For a command it enters `cwd`, sets exactly the environment given and puts the pipes on its own
 * 0-2, forks, and takes its channels back. The child starts a session, writes its pid into each
 * cgroup `procs` file (failing as the join wrapper does: a line on stderr, exit 125) and execs.
 * Every other descriptor of the helper is close-on-exec (perl opens them so; inherited ones are
 * closed at start-up). A failed exec comes back through a close-on-exec pipe, as libuv does, and
 * is waited for: only one child at a time shares the helper's pages (a second one forked
 * meanwhile made every page the helper wrote a copy: measured twice the CPU per command). It
 * catches only SIGCHLD, so a command starts with every signal at its default.
 *
 * The child does as little as it can before exec: every page it writes is copied first.
 */
export const PERL_HELPER: string = String.raw`
use strict; use POSIX ();
if (opendir(my $d, '/proc/self/fd')) {
  my @fds = grep { /^\d+$/ && $_ > 2 } readdir($d); closedir($d);
  for my $fd (@fds) { my $h; close($h) if open($h, '<&=', $fd) || open($h, '>&=', $fd); }
}
binmode STDIN; binmode STDOUT;
chdir('/');
# The request, reply and log channels get copies above 2: each fork borrows 0-2 for the child's
# pipes (set up here, so the child itself does almost nothing before its exec) and gives them back.
open(my $req, '<&', \*STDIN) or die "dup: $!"; open(my $rep, '>&', \*STDOUT) or die "dup: $!";
open(my $log, '>&', \*STDERR) or die "dup: $!"; open(my $null, '<', '/dev/null') or die "/dev/null: $!";
my ($req_fd, $rep_fd, $log_fd, $null_fd) = map { fileno($_) } $req, $rep, $log, $null;
# Once the child has exec'd: the helper keeps neither the command's folder (it would hold a mount
# busy) nor its environment.
sub forget { chdir('/'); %ENV = (); }
sub channels_back { POSIX::dup2($req_fd, 0); POSIX::dup2($rep_fd, 1); POSIX::dup2($log_fd, 2); }
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
fcntl($wake_w, POSIX::F_SETFL(), POSIX::O_NONBLOCK());
$SIG{CHLD} = sub { syswrite($wake_w, 'x') };
my (%kids, %held);
sub reply {
  my ($line) = @_;
  my $off = 0;
  while ($off < length $line) {
    my $n = syswrite(STDOUT, $line, length($line) - $off, $off);
    if (!defined $n) { next if $!{EINTR}; POSIX::_exit(0); }
    $off += $n;
  }
}
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    reply("X $pid $?\n") if delete $kids{$pid};
  }
}
sub start {
  my ($id, $stdin, $cwd, $file, @f) = @_;
  my @argv = splice(@f, 0, shift @f);
  my @env = splice(@f, 0, shift @f);
  my @groups = splice(@f, 0, shift @f);
  # Terminals are the Python helper's (the server never asks this one).
  return reply("F $id " . POSIX::ENOSYS() . " terminal\n") if $stdin =~ m{^/};
  my ($out_r, $out_w, $err_r, $err_w, $in_r, $in_w, $x_r, $x_w);
  if (!(pipe($out_r, $out_w) && pipe($err_r, $err_w) && pipe($x_r, $x_w)
        && ($stdin ne 'p' || pipe($in_r, $in_w)))) {
    return reply("F $id " . ($! + 0) . " pipe\n");
  }
  if (!chdir($cwd)) { my $errno = $! + 0; close($_) for grep { $_ } $out_r, $out_w, $err_r, $err_w, $in_r, $in_w, $x_r, $x_w; return reply("F $id $errno chdir\n"); }
  %ENV = ();
  for my $e (@env) { my $i = index($e, '='); $ENV{substr($e, 0, $i)} = substr($e, $i + 1); }
  POSIX::dup2($in_r ? fileno($in_r) : $null_fd, 0); POSIX::dup2(fileno($out_w), 1); POSIX::dup2(fileno($err_w), 2);
  my $pid = fork;
  if (defined $pid && $pid == 0) {
    POSIX::setsid();
    for my $g (@groups) {
      my $h;
      if (!(sysopen($h, $g, 1) && defined(syswrite($h, "$$\n")) && close($h))) {
        syswrite(STDERR, "execd: cannot join the command cgroup $g: $!\n"); POSIX::_exit(125);
      }
    }
    { no warnings; exec { $file } @argv; }
    syswrite($x_w, ($! + 0) . ' exec'); POSIX::_exit(127);
  }
  channels_back();
  if (!defined $pid) { my $errno = $! + 0; forget(); close($_) for grep { $_ } $out_r, $out_w, $err_r, $err_w, $in_r, $in_w, $x_r, $x_w; return reply("F $id $errno fork\n"); }
  close($x_w); close($out_w); close($err_w); close($in_r) if $in_r;
  my $failed = '';
  while (1) {
    my $n = sysread($x_r, $failed, 64, length $failed);
    next if !defined $n && $!{EINTR};
    last;
  }
  close($x_r);
  forget();
  if ($failed ne '') { waitpid($pid, 0); close($out_r); close($err_r); close($in_w) if $in_w; return reply("F $id $failed\n"); }
  $kids{$pid} = 1;
  $held{$id} = [$out_r, $err_r, $in_w];
  reply("S $id $pid " . fileno($out_r) . ' ' . fileno($err_r) . ' ' . ($in_w ? fileno($in_w) : -1) . "\n");
}
pipe(my $probe_r, my $probe_w) or die "pipe: $!";
$held{probe} = [$probe_r, $probe_w];
reply('P ' . fileno($probe_r) . "\n");
my $buf = '';
while (1) {
  reap();
  my $rin = '';
  vec($rin, fileno($wake_r), 1) = 1;
  vec($rin, 0, 1) = 1;
  my $n = select(my $rout = $rin, undef, undef, undef);
  next if $n <= 0;
  if (vec($rout, fileno($wake_r), 1)) { my $drain; sysread($wake_r, $drain, 4096); }
  next if !vec($rout, 0, 1);
  my $got = sysread(STDIN, $buf, 1 << 18, length $buf);
  next if !defined $got && $!{EINTR};
  POSIX::_exit(0) if !$got;
  while (length($buf) >= 4) {
    my $len = unpack('N', $buf);
    last if length($buf) < 4 + $len;
    my @fields = split(/\0/, substr($buf, 4, $len), -1);
    substr($buf, 0, 4 + $len) = '';
    my $kind = shift @fields;
    if ($kind eq 's') { start(@fields); }
    elsif ($kind eq 'r') { delete @held{@fields}; }
  }
}
`;
