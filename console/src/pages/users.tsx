// Users: invite and re-invite (the single-use link shown once, named for its user, with a copy
// button), disable (not oneself: the API refuses that too).
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { Invitation, Role } from "../api/types";
import { useCanWrite, useSession, useTenantId, useTenantQuery } from "../session";
import { ConfirmButton, CopyButton, ErrorBox, Loaded, Page } from "../ui";

/** An invitation's link, shown once (the API never shows it again): its accessible name says whose. */
function InvitationLink({
  email,
  invitation,
  renewed = false,
}: {
  email: string;
  invitation: Invitation;
  renewed?: boolean;
}) {
  const name = `${renewed ? "New invitation" : "Invitation"} link for ${email}`;
  return (
    <div role="status" className="secret" aria-label={name}>
      <span>
        {name} (shown once; single use, until {new Date(invitation.expiresAt).toLocaleString()}):{" "}
        <code className="wrap" data-testid="invitation-url">
          {invitation.url}
        </code>
      </span>{" "}
      <CopyButton text={invitation.url} label="Copy link" />
    </div>
  );
}

function Invite() {
  const { user } = useSession();
  const tenantId = useTenantId();
  const client = useQueryClient();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("tenant-admin");
  const invite = useMutation({
    mutationFn: () =>
      api.post("/admin/users", {
        body: { email, role, ...(role !== "operator" && tenantId ? { tenantId } : {}) },
      }),
    onSuccess: () => {
      setEmail("");
      void client.invalidateQueries({ queryKey: ["/admin/users"] });
    },
  });
  const needsTenant = user.role === "operator" && role !== "operator" && !tenantId;
  return (
    <form
      className="inline-form"
      aria-label="Invite a user"
      onSubmit={(event) => {
        event.preventDefault();
        invite.mutate();
      }}
    >
      <label>
        E-mail
        <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          <option value="tenant-admin">tenant-admin</option>
          <option value="tenant-viewer">tenant-viewer (read only)</option>
          {user.role === "operator" && <option value="operator">operator</option>}
        </select>
      </label>
      <button type="submit" disabled={invite.isPending || needsTenant}>
        Invite
      </button>
      {needsTenant && <p>Choose a tenant above to invite one of its users.</p>}
      {invite.data && <InvitationLink email={invite.data.user.email} invitation={invite.data.invitation} />}
      {invite.isError && <ErrorBox error={invite.error} />}
    </form>
  );
}

export default function Users() {
  const { user: me } = useSession();
  const tenant = useTenantQuery();
  const canWrite = useCanWrite();
  const client = useQueryClient();
  const [reinvited, setReinvited] = useState<{ email: string; invitation: Invitation } | null>(null);
  const users = useQuery({
    queryKey: ["/admin/users", tenant],
    queryFn: () => api.get("/admin/users", { query: tenant }),
  });
  const disable = useMutation({
    mutationFn: (id: string) => api.delete("/admin/users/{id}", { path: { id } }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/users"] }),
  });
  const reinvite = useMutation({
    mutationFn: async (user: { id: string; email: string }) => ({
      email: user.email,
      ...(await api.post("/admin/users/{id}/invitation", { path: { id: user.id }, body: {} })),
    }),
    onSuccess: setReinvited,
  });
  return (
    <Page title="Users">
      {canWrite && <Invite />}
      {reinvited && <InvitationLink {...reinvited} renewed />}
      {(disable.isError || reinvite.isError) && <ErrorBox error={disable.error ?? reinvite.error} />}
      <Loaded query={users} empty="No users yet." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  {canWrite && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {page.items
                  .map((u) => ({
                    ...u,
                    status: u.disabledAt ? "disabled" : u.accepted ? "active" : "invited",
                  }))
                  .map((u) => (
                    <tr key={u.id}>
                      <td>{u.email}</td>
                      <td>{u.role}</td>
                      <td>{u.status}</td>
                      {canWrite && (
                        <td>
                          {u.status === "invited" && (
                            <button type="button" onClick={() => reinvite.mutate(u)}>
                              New invitation
                            </button>
                          )}{" "}
                          {u.status !== "disabled" && u.id !== me.id && (
                            <ConfirmButton
                              label="Disable"
                              question={`Disable ${u.email}? Their sessions end now.`}
                              onConfirm={() => disable.mutate(u.id)}
                            />
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </Page>
  );
}
