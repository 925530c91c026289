// Message catalogues for e-mails and the signer page. A locale is "known" only when it is complete here; the
// catalogue type makes the compiler reject a locale that misses or invents a key.
export const KNOWN_LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof KNOWN_LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** Exact tags only: `de` is known, `de-DE`, `DE` and `de_DE` are not (callers answer 400). */
export const isKnownLocale = (tag: unknown): tag is Locale =>
  typeof tag === 'string' && (KNOWN_LOCALES as readonly string[]).includes(tag);

// Placeholders are `{name}`. Quotation marks follow each language's convention, so they live in the strings.
const en = {
  'mail.greeting': 'Hello {name},',
  'mail.greetingNoName': 'Hello,',
  'mail.openLink': 'Open this link to review and sign the document:',
  'mail.linkFallback': 'If the button does not work, copy this link into your browser:',
  'mail.messageFrom': 'Message from {workspace}:',
  'mail.footer.why': 'You received this e-mail because {workspace} uses Signet to collect signatures.',
  'mail.footer.doNotForward':
    'Please do not forward this e-mail: the link is personal and lets anyone who has it sign in your name.',
  'mail.invitation.subject': '{workspace} asks you to sign “{title}”',
  'mail.invitation.intro': '{workspace} has sent you “{title}” to review and sign.',
  'mail.invitation.button': 'Review and sign',
  'mail.invitation.expires': 'This request expires on {date}.',
  'mail.reminder.subject': 'Reminder: {workspace} is waiting for your signature on “{title}”',
  'mail.reminder.intro':
    'This is a reminder that “{title}”, sent to you by {workspace}, is still waiting for your signature.',
  'mail.completed.subject': 'Completed: “{title}”',
  'mail.completed.intro': 'All parties have signed “{title}”. The document is complete.',
  'mail.completed.body':
    'No further action is needed from you. If you need a copy of the signed document, please contact {workspace}.',
  'mail.declined.subject': 'Declined: “{title}”',
  'mail.declined.intro':
    '{decliner} declined to sign “{title}”. The signing process has been stopped, and you do not need to do anything further.',
  'mail.expired.subject': 'Expired: “{title}”',
  'mail.expired.intro':
    'The request from {workspace} to sign “{title}” expired on {date} and can no longer be signed. If you still need to sign, please contact {workspace}.',
  'mail.withdrawn.subject': 'Withdrawn: “{title}”',
  'mail.withdrawn.intro': '{workspace} has withdrawn the request to sign “{title}”. You no longer need to sign it.',

  'page.title': 'Sign a document',
  'page.sentBy': 'Sent by {workspace}',
  'page.reviewAndSign': 'Review and sign',
  'page.typeSignature': 'Type your signature',
  'page.drawSignature': 'Draw your signature',
  'page.clear': 'Clear',
  'page.sign': 'Sign',
  'page.decline': 'Decline',
  'page.declineReason': 'Reason for declining',
  'page.confirmDecline': 'Confirm decline',
  'page.cancel': 'Cancel',
  'page.signedThanks': 'Thank you — you signed this document.',
  'page.signedNext': 'You will receive an e-mail once everyone has signed.',
  'page.declinedDone': 'You declined to sign this document.',
  'page.expired': 'This request has expired.',
  'page.withdrawn': 'This request was withdrawn.',
  'page.notOpen': 'This request is no longer open.',
  'page.loading': 'Loading document…',
  'page.pageOf': 'Page {page} of {pages}',
  'page.signHere': 'Sign here',
  'page.signature': 'Signature',
  'page.initials': 'Initials',
  'page.date': 'Date',
  'page.text': 'Text',
  'page.fullName': 'Full name',
  'page.required': 'Required',
  'page.nextField': 'Next field',
  'page.consent': 'By selecting “Sign”, I agree that my electronic signature is as valid as my handwritten signature.',
  'page.errorGeneric': 'Something went wrong. Please try again.',
  'page.errorNetwork': 'The server could not be reached. Please check your connection and try again.',
  'page.errorDocumentLoad': 'The document could not be loaded.',
  'page.errorSignatureRequired': 'Please type or draw your signature.',
  'page.errorFieldsRequired': 'Please complete all required fields.',
  'page.errorReasonRequired': 'Please give a reason for declining.',
  'page.errorNotFound': 'This signing link is not valid.',
  'page.tooManyRequests': 'Too many requests came from your network.',
  'page.tryAgainIn': 'Please wait {seconds} seconds, then reload this page.',
  'page.errorRateLimited': 'Too many attempts. Please wait a moment and try again.',
} as const;

export type MessageKey = keyof typeof en;
type Catalogue = { readonly [K in MessageKey]: string };

const de: Catalogue = {
  'mail.greeting': 'Guten Tag {name},',
  'mail.greetingNoName': 'Guten Tag,',
  'mail.openLink': 'Öffnen Sie diesen Link, um das Dokument zu prüfen und zu unterschreiben:',
  'mail.linkFallback': 'Falls die Schaltfläche nicht funktioniert, kopieren Sie diesen Link in Ihren Browser:',
  'mail.messageFrom': 'Nachricht von {workspace}:',
  'mail.footer.why': 'Sie erhalten diese E-Mail, weil {workspace} Unterschriften über Signet einholt.',
  'mail.footer.doNotForward':
    'Bitte leiten Sie diese E-Mail nicht weiter: Der Link ist persönlich, und wer ihn besitzt, kann in Ihrem Namen unterschreiben.',
  'mail.invitation.subject': '{workspace} bittet Sie, „{title}“ zu unterschreiben',
  'mail.invitation.intro': '{workspace} hat Ihnen „{title}“ zur Prüfung und Unterschrift gesendet.',
  'mail.invitation.button': 'Prüfen und unterschreiben',
  'mail.invitation.expires': 'Diese Anfrage läuft am {date} ab.',
  'mail.reminder.subject': 'Erinnerung: {workspace} wartet auf Ihre Unterschrift unter „{title}“',
  'mail.reminder.intro':
    'Wir möchten Sie daran erinnern, dass „{title}“ von {workspace} noch auf Ihre Unterschrift wartet.',
  'mail.completed.subject': 'Abgeschlossen: „{title}“',
  'mail.completed.intro': 'Alle Beteiligten haben „{title}“ unterschrieben. Das Dokument ist damit abgeschlossen.',
  'mail.completed.body':
    'Sie müssen nichts weiter tun. Wenn Sie eine Kopie des unterschriebenen Dokuments benötigen, wenden Sie sich bitte an {workspace}.',
  'mail.declined.subject': 'Abgelehnt: „{title}“',
  'mail.declined.intro':
    '{decliner} hat es abgelehnt, „{title}“ zu unterschreiben. Der Signaturvorgang wurde beendet; Sie müssen nichts weiter tun.',
  'mail.expired.subject': 'Abgelaufen: „{title}“',
  'mail.expired.intro':
    'Die Anfrage von {workspace}, „{title}“ zu unterschreiben, ist am {date} abgelaufen und kann nicht mehr unterschrieben werden. Falls Sie dennoch unterschreiben möchten, wenden Sie sich bitte an {workspace}.',
  'mail.withdrawn.subject': 'Zurückgezogen: „{title}“',
  'mail.withdrawn.intro':
    '{workspace} hat die Anfrage, „{title}“ zu unterschreiben, zurückgezogen. Sie müssen das Dokument nicht mehr unterschreiben.',

  'page.title': 'Dokument unterschreiben',
  'page.sentBy': 'Gesendet von {workspace}',
  'page.reviewAndSign': 'Prüfen und unterschreiben',
  'page.typeSignature': 'Unterschrift eingeben',
  'page.drawSignature': 'Unterschrift zeichnen',
  'page.clear': 'Löschen',
  'page.sign': 'Unterschreiben',
  'page.decline': 'Ablehnen',
  'page.declineReason': 'Grund der Ablehnung',
  'page.confirmDecline': 'Ablehnung bestätigen',
  'page.cancel': 'Abbrechen',
  'page.signedThanks': 'Vielen Dank – Sie haben dieses Dokument unterschrieben.',
  'page.signedNext': 'Sobald alle Beteiligten unterschrieben haben, erhalten Sie eine E-Mail.',
  'page.declinedDone': 'Sie haben es abgelehnt, dieses Dokument zu unterschreiben.',
  'page.expired': 'Diese Anfrage ist abgelaufen.',
  'page.withdrawn': 'Diese Anfrage wurde zurückgezogen.',
  'page.notOpen': 'Diese Anfrage ist nicht mehr offen.',
  'page.loading': 'Dokument wird geladen …',
  'page.pageOf': 'Seite {page} von {pages}',
  'page.signHere': 'Hier unterschreiben',
  'page.signature': 'Unterschrift',
  'page.initials': 'Initialen',
  'page.date': 'Datum',
  'page.text': 'Text',
  'page.fullName': 'Vollständiger Name',
  'page.required': 'Pflichtfeld',
  'page.nextField': 'Nächstes Feld',
  'page.consent':
    'Mit „Unterschreiben“ erkläre ich mich damit einverstanden, dass meine elektronische Unterschrift ebenso gültig ist wie meine handschriftliche.',
  'page.errorGeneric': 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
  'page.errorNetwork': 'Der Server ist nicht erreichbar. Bitte prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  'page.errorDocumentLoad': 'Das Dokument konnte nicht geladen werden.',
  'page.errorSignatureRequired': 'Bitte geben Sie Ihre Unterschrift ein oder zeichnen Sie sie.',
  'page.errorFieldsRequired': 'Bitte füllen Sie alle Pflichtfelder aus.',
  'page.errorReasonRequired': 'Bitte geben Sie einen Grund für die Ablehnung an.',
  'page.errorNotFound': 'Dieser Link zum Unterschreiben ist ungültig.',
  'page.tooManyRequests': 'Aus Ihrem Netzwerk kamen zu viele Anfragen.',
  'page.tryAgainIn': 'Bitte warten Sie {seconds} Sekunden und laden Sie die Seite dann neu.',
  'page.errorRateLimited': 'Zu viele Versuche. Bitte warten Sie einen Moment und versuchen Sie es dann erneut.',
};

// French typography: a no-break space inside guillemets and before : ; ? !
const fr: Catalogue = {
  'mail.greeting': 'Bonjour {name},',
  'mail.greetingNoName': 'Bonjour,',
  'mail.openLink': 'Ouvrez ce lien pour consulter et signer le document\u00a0:',
  'mail.linkFallback': 'Si le bouton ne fonctionne pas, copiez ce lien dans votre navigateur\u00a0:',
  'mail.messageFrom': 'Message de {workspace}\u00a0:',
  'mail.footer.why': 'Vous recevez cet e-mail parce que {workspace} utilise Signet pour recueillir des signatures.',
  'mail.footer.doNotForward':
    'Merci de ne pas transférer cet e-mail\u00a0: ce lien est personnel et permet à quiconque le détient de signer en votre nom.',
  'mail.invitation.subject': '{workspace} vous invite à signer «\u00a0{title}\u00a0»',
  'mail.invitation.intro': '{workspace} vous a envoyé «\u00a0{title}\u00a0» pour relecture et signature.',
  'mail.invitation.button': 'Consulter et signer',
  'mail.invitation.expires': 'Cette demande expire le {date}.',
  'mail.reminder.subject': 'Rappel\u00a0: {workspace} attend votre signature pour «\u00a0{title}\u00a0»',
  'mail.reminder.intro':
    'Nous vous rappelons que le document «\u00a0{title}\u00a0», envoyé par {workspace}, attend toujours votre signature.',
  'mail.completed.subject': 'Finalisé\u00a0: «\u00a0{title}\u00a0»',
  'mail.completed.intro': 'Toutes les parties ont signé «\u00a0{title}\u00a0». Le document est finalisé.',
  'mail.completed.body':
    'Aucune autre action n’est requise de votre part. Pour obtenir une copie du document signé, veuillez contacter {workspace}.',
  'mail.declined.subject': 'Refusé\u00a0: «\u00a0{title}\u00a0»',
  'mail.declined.intro':
    '{decliner} a refusé de signer «\u00a0{title}\u00a0». La procédure de signature a été interrompue\u00a0; aucune action n’est requise de votre part.',
  'mail.expired.subject': 'Expiré\u00a0: «\u00a0{title}\u00a0»',
  'mail.expired.intro':
    'La demande de signature de «\u00a0{title}\u00a0» envoyée par {workspace} a expiré le {date} et ne peut plus être signée. Si vous devez encore signer, veuillez contacter {workspace}.',
  'mail.withdrawn.subject': 'Demande retirée\u00a0: «\u00a0{title}\u00a0»',
  'mail.withdrawn.intro':
    '{workspace} a retiré la demande de signature de «\u00a0{title}\u00a0». Vous n’avez plus besoin de signer ce document.',

  'page.title': 'Signer un document',
  'page.sentBy': 'Envoyé par {workspace}',
  'page.reviewAndSign': 'Consulter et signer',
  'page.typeSignature': 'Saisir votre signature',
  'page.drawSignature': 'Dessiner votre signature',
  'page.clear': 'Effacer',
  'page.sign': 'Signer',
  'page.decline': 'Refuser',
  'page.declineReason': 'Motif du refus',
  'page.confirmDecline': 'Confirmer le refus',
  'page.cancel': 'Annuler',
  'page.signedThanks': 'Merci — vous avez signé ce document.',
  'page.signedNext': 'Vous recevrez un e-mail lorsque toutes les parties auront signé.',
  'page.declinedDone': 'Vous avez refusé de signer ce document.',
  'page.expired': 'Cette demande a expiré.',
  'page.withdrawn': 'Cette demande a été retirée.',
  'page.notOpen': 'Cette demande n’est plus ouverte.',
  'page.loading': 'Chargement du document…',
  'page.pageOf': 'Page {page} sur {pages}',
  'page.signHere': 'Signer ici',
  'page.signature': 'Signature',
  'page.initials': 'Initiales',
  'page.date': 'Date',
  'page.text': 'Texte',
  'page.fullName': 'Nom complet',
  'page.required': 'Obligatoire',
  'page.nextField': 'Champ suivant',
  'page.consent':
    'En sélectionnant «\u00a0Signer\u00a0», j’accepte que ma signature électronique ait la même valeur que ma signature manuscrite.',
  'page.errorGeneric': 'Une erreur s’est produite. Veuillez réessayer.',
  'page.errorNetwork': 'Impossible de joindre le serveur. Veuillez vérifier votre connexion et réessayer.',
  'page.errorDocumentLoad': 'Le document n’a pas pu être chargé.',
  'page.errorSignatureRequired': 'Veuillez saisir ou dessiner votre signature.',
  'page.errorFieldsRequired': 'Veuillez remplir tous les champs obligatoires.',
  'page.errorReasonRequired': 'Veuillez indiquer le motif de votre refus.',
  'page.errorNotFound': 'Ce lien de signature n’est pas valide.',
  'page.tooManyRequests': 'Trop de requêtes sont venues de votre réseau.',
  'page.tryAgainIn': 'Veuillez patienter {seconds} secondes, puis rechargez cette page.',
  'page.errorRateLimited': 'Trop de tentatives. Veuillez patienter un instant, puis réessayer.',
};

const es: Catalogue = {
  'mail.greeting': 'Hola, {name}:',
  'mail.greetingNoName': 'Hola:',
  'mail.openLink': 'Abra este enlace para revisar y firmar el documento:',
  'mail.linkFallback': 'Si el botón no funciona, copie este enlace en su navegador:',
  'mail.messageFrom': 'Mensaje de {workspace}:',
  'mail.footer.why': 'Ha recibido este correo electrónico porque {workspace} utiliza Signet para recabar firmas.',
  'mail.footer.doNotForward':
    'No reenvíe este correo electrónico: el enlace es personal y permite a cualquier persona que lo tenga firmar en su nombre.',
  'mail.invitation.subject': '{workspace} le solicita que firme «{title}»',
  'mail.invitation.intro': '{workspace} le ha enviado «{title}» para que lo revise y lo firme.',
  'mail.invitation.button': 'Revisar y firmar',
  'mail.invitation.expires': 'Esta solicitud vence el {date}.',
  'mail.reminder.subject': 'Recordatorio: {workspace} está esperando su firma en «{title}»',
  'mail.reminder.intro': 'Le recordamos que «{title}», enviado por {workspace}, sigue pendiente de su firma.',
  'mail.completed.subject': 'Completado: «{title}»',
  'mail.completed.intro': 'Todas las partes han firmado «{title}». El documento está completado.',
  'mail.completed.body':
    'No necesita hacer nada más. Si necesita una copia del documento firmado, póngase en contacto con {workspace}.',
  'mail.declined.subject': 'Rechazado: «{title}»',
  'mail.declined.intro':
    '{decliner} ha rechazado firmar «{title}». El proceso de firma se ha detenido y usted no necesita hacer nada más.',
  'mail.expired.subject': 'Vencido: «{title}»',
  'mail.expired.intro':
    'La solicitud de {workspace} para firmar «{title}» venció el {date} y ya no se puede firmar. Si todavía necesita firmarlo, póngase en contacto con {workspace}.',
  'mail.withdrawn.subject': 'Retirado: «{title}»',
  'mail.withdrawn.intro': '{workspace} ha retirado la solicitud de firma de «{title}». Ya no necesita firmarlo.',

  'page.title': 'Firmar un documento',
  'page.sentBy': 'Enviado por {workspace}',
  'page.reviewAndSign': 'Revisar y firmar',
  'page.typeSignature': 'Escriba su firma',
  'page.drawSignature': 'Dibuje su firma',
  'page.clear': 'Borrar',
  'page.sign': 'Firmar',
  'page.decline': 'Rechazar',
  'page.declineReason': 'Motivo del rechazo',
  'page.confirmDecline': 'Confirmar el rechazo',
  'page.cancel': 'Cancelar',
  'page.signedThanks': 'Gracias: ha firmado este documento.',
  'page.signedNext': 'Recibirá un correo electrónico cuando todas las partes hayan firmado.',
  'page.declinedDone': 'Ha rechazado firmar este documento.',
  'page.expired': 'Esta solicitud ha vencido.',
  'page.withdrawn': 'Esta solicitud ha sido retirada.',
  'page.notOpen': 'Esta solicitud ya no está abierta.',
  'page.loading': 'Cargando el documento…',
  'page.pageOf': 'Página {page} de {pages}',
  'page.signHere': 'Firme aquí',
  'page.signature': 'Firma',
  'page.initials': 'Iniciales',
  'page.date': 'Fecha',
  'page.text': 'Texto',
  'page.fullName': 'Nombre completo',
  'page.required': 'Obligatorio',
  'page.nextField': 'Siguiente campo',
  'page.consent':
    'Al seleccionar «Firmar», acepto que mi firma electrónica tiene la misma validez que mi firma manuscrita.',
  'page.errorGeneric': 'Se ha producido un error. Inténtelo de nuevo.',
  'page.errorNetwork': 'No se puede conectar con el servidor. Compruebe su conexión e inténtelo de nuevo.',
  'page.errorDocumentLoad': 'No se ha podido cargar el documento.',
  'page.errorSignatureRequired': 'Escriba o dibuje su firma.',
  'page.errorFieldsRequired': 'Complete todos los campos obligatorios.',
  'page.errorReasonRequired': 'Indique el motivo del rechazo.',
  'page.errorNotFound': 'Este enlace de firma no es válido.',
  'page.tooManyRequests': 'Llegaron demasiadas solicitudes desde su red.',
  'page.tryAgainIn': 'Espere {seconds} segundos y vuelva a cargar esta página.',
  'page.errorRateLimited': 'Demasiados intentos. Espere un momento e inténtelo de nuevo.',
};

export const catalogues: Readonly<Record<Locale, Catalogue>> = { en, de, fr, es };

export type Vars = Readonly<Record<string, string | number>>;

/** Fills `{name}` placeholders. A placeholder without a value is a programming error, so it throws. */
export function fill(template: string, vars: Vars = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`missing value for {${name}} in "${template}"`);
    return String(v);
  });
}

/** The message `key` in `locale`, placeholders filled. Values are inserted raw: escape the result for HTML. */
export function t(locale: Locale, key: MessageKey, vars?: Vars): string {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  return fill(cat[key], vars);
}

type PageKey = MessageKey extends infer K ? (K extends `page.${infer P}` ? P : never) : never;
export type PageStrings = { readonly [K in PageKey]: string };

/**
 * Every string of the signer page in `locale`, keyed without the `page.` prefix. Values may hold placeholders
 * (`pageOf`: {page} {pages}; `sentBy`: {workspace}); fill them with `fill()` or on the client.
 */
export function pageStrings(locale: Locale): PageStrings {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cat)) if (k.startsWith('page.')) out[k.slice(5)] = v;
  return out as PageStrings;
}

/** Date and time in the locale's words, in UTC and labelled so, e.g. "6. Dezember 2026 um 10:00 UTC". */
export function formatDateTime(locale: Locale, ms: number): string {
  return new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(ms);
}
